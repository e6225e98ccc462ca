/** Twilio's side of a ConversationRelay call, played by a real `ws` client (the phone tests). */
import { once } from 'node:events';
import WebSocket from 'ws';
import type { TestService } from './service.ts';

/** The bridge token the phone tests configure (BRIDGE_TOKEN). */
export const BRIDGE_TOKEN = 'bridge-token-0123456789abcdef0123456789';
/** The workspace number the phone tests call. */
export const NUMBER = '+31201234567';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Frame = Record<string, any>;

/** Twilio's side of one call. */
export class Caller {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number }>;
  readonly ws: WebSocket;
  #waiters: Array<() => void> = [];

  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(String(data)) as Frame);
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.closed = once(ws, 'close').then(([code]) => ({ code: code as number }));
  }

  static async connect(service: TestService, options: { headers?: Record<string, string>; query?: string; autoPong?: boolean } = {}): Promise<Caller> {
    const ws = new WebSocket(`${service.url.replace('http', 'ws')}/v1/phone/ws${options.query ?? ''}`, {
      headers: options.headers ?? { authorization: `Bearer ${BRIDGE_TOKEN}` },
      autoPong: options.autoPong ?? true,
    });
    await once(ws, 'open');
    return new Caller(ws);
  }

  send(frame: Frame | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  setup(callSid: string, to = NUMBER, from = '+31612345678'): void {
    this.send({ type: 'setup', sessionId: `VX${callSid}`, accountSid: 'AC1', callSid, from, to, direction: 'inbound', customParameters: {} });
  }

  say(text: string, last = true, lang = 'en-US'): void {
    this.send({ type: 'prompt', voicePrompt: text, lang, last });
  }

  /** The next frame (after the ones already taken) that matches. */
  async next(match: (f: Frame) => boolean = () => true, timeoutMs = 5_000): Promise<Frame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.frames.findIndex(match);
      if (i >= 0) return this.frames.splice(0, i + 1).at(-1)!;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  answer(): Promise<Frame> {
    return this.next((f) => f.type === 'text' && !f.preemptible);
  }

  close(): void {
    this.ws.close();
  }
}

