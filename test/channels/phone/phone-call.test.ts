/**
 * One call's socket adapter (src/channels/phone/phone-call.ts) on a stand-in socket and runtime: the call's
 * statechart decides what goes out when the call cannot be served, and when admission control stops counting it.
 */
import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { startPhoneCall, type PhoneCallDeps, type PhoneRuntime } from '../../../src/channels/phone/phone-call.ts';
import { createPhoneMetrics } from '../../../src/channels/phone/phone-metrics.ts';
import { createLogger } from '../../../src/log.ts';

/** A socket that records what is sent and closed; `closeFromBridge` plays the bridge closing it. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  sent: Record<string, unknown>[] = [];
  closes: [number, string][] = [];
  send(data: string): void {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close(code: number, reason: string): void {
    this.closes.push([code, reason]);
  }
  frame(value: unknown): void {
    this.emit('message', Buffer.from(JSON.stringify(value)), false);
  }
  closeFromBridge(): void {
    this.readyState = 3;
    this.emit('close', 1000);
  }
}

const SETUP = { type: 'setup', sessionId: 'VX1', callSid: 'CA1', from: '+31612345678', to: '+31201234567', customParameters: {} };

function call(overrides: Partial<PhoneCallDeps> = {}) {
  const ws = new FakeSocket();
  const admission = { admitted: 0, ended: 0 };
  const runtime: PhoneRuntime = {
    handleMessage: () => Promise.reject(new Error('no turns here')),
    open: async () => ({ sessionId: 's1' }),
    interrupt: () => {},
    end: async () => {},
  };
  const handle = startPhoneCall(ws as unknown as WebSocket, {
    runtime,
    admission: { admitCall: () => (admission.admitted++, true), callEnded: () => void admission.ended++ },
    workspaceForNumber: async () => 'w1',
    metrics: createPhoneMetrics(new Registry()),
    logger: createLogger('silent'),
    fillerMs: 1_500,
    dtmfEntryMs: 2_000,
    maxFrameBytes: 65_536,
    setupTimeoutMs: 10_000,
    endGraceMs: 1_000,
    ...overrides,
  });
  return { ws, handle, admission };
}

const settle = () => new Promise((r) => setTimeout(r, 10));

describe('a phone call on its socket', () => {
  it('a workspace lookup that fails: the apology and our end frame, and the call finishes when the socket closes', async () => {
    const { ws, handle, admission } = call({ workspaceForNumber: () => Promise.reject(new Error('database down')) });
    ws.frame(SETUP);
    await settle();
    expect(ws.sent.map((f) => f.type)).toEqual(['text', 'end']);
    expect(ws.sent[1]).toEqual({ type: 'end' });
    ws.closeFromBridge();
    await handle.finished;
    expect(admission).toEqual({ admitted: 1, ended: 1 });
  });

  it('refused by admission control: the busy sentence, end with reason busy, and nothing to stop counting', async () => {
    const { ws, handle, admission } = call({ admission: { admitCall: () => false, callEnded: () => void admission.ended++ } });
    ws.frame(SETUP);
    await settle();
    expect(ws.sent.at(-1)).toEqual({ type: 'end', handoffData: JSON.stringify({ reason: 'busy', session_id: '' }) });
    ws.closeFromBridge();
    await handle.finished;
    expect(admission.ended).toBe(0);
  });

  it('SIGTERM while talking: end with reason reconnect, close 1001, and the session is not ended', async () => {
    let ended = 0;
    const { ws, handle } = call({
      runtime: { handleMessage: () => Promise.reject(new Error('none')), open: async () => ({ sessionId: 's1' }), interrupt: () => {}, end: async () => void ended++ },
    });
    ws.frame(SETUP);
    await settle();
    handle.handBack();
    expect(ws.sent.at(-1)).toEqual({ type: 'end', handoffData: JSON.stringify({ reason: 'reconnect', session_id: 's1' }) });
    expect(ws.closes).toEqual([[1001, 'server shutting down']]);
    ws.closeFromBridge();
    await handle.finished;
    expect(ended).toBe(0);
  });
});
