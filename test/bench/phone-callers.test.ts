/**
 * The phone benchmarks' callers (bench/processes/phone-callers.ts) match every answer to its prompt by id: a prompt the engine
 * never answers, a second answer to one prompt and an answer to no prompt are each counted, so the benchmark can call
 * the run invalid (issue 16). Played against a loopback WebSocket server that answers like the engine, with faults.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { startCallersProcess } from '../../bench/lib/callers-process.ts';

const REF = /ref p(\d+)x(\d+)\)/;

describe('the phone callers match answers to prompts by id', () => {
  let server: WebSocketServer;
  let url: string;

  beforeAll(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on('connection', (ws) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; voicePrompt?: string; callSid?: string };
        if (frame.type !== 'prompt') return;
        const [, call, n] = REF.exec(frame.voicePrompt ?? '')!;
        const answer = (text: string) => ws.send(JSON.stringify({ type: 'text', token: text, last: true }));
        // Call 0: its 2nd prompt is never answered. Call 1: its 2nd prompt is answered twice. Call 2: one answer
        // carries no reference. Everything else: answered once.
        if (call === '0' && n === '2') return;
        answer(`Your order ships tomorrow. (ref p${call}x${n})`);
        if (call === '1' && n === '2') answer(`Your order ships tomorrow. (ref p${call}x${n})`);
        if (call === '2' && n === '2') answer("Sorry, I don't know.");
      });
    });
  });
  afterAll(async () => {
    for (const ws of server.clients) ws.terminate();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('counts the unanswered prompt, the duplicate and the answer to no prompt; the others are answered', async () => {
    const callers = startCallersProcess({ url, token: 't', number: '+31201234567', calls: 4, intervalMs: 300, warmupSeconds: 0, seconds: 1, matchIds: true });
    try {
      expect((await callers.next('connected')).connectErrors).toBe(0);
      callers.send('start');
      const results = await callers.next('finished');
      expect(results.prompts).toBeGreaterThanOrEqual(12);
      expect(results.unanswered).toBe(1);
      expect(results.unansweredIds).toEqual(['0:2']);
      expect(results.duplicates).toBe(1);
      expect(results.mismatched).toBe(1);
      expect(results.answered).toBe(results.prompts - 1);
      expect(new Set(results.ids).size).toBe(results.answered);
    } finally {
      await callers.stop();
    }
  });
});
