/**
 * Test helpers for webhook receivers: every delivery is verified with the official Standard Webhooks library
 * (`standardwebhooks`), the way an integrator verifies it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { vi } from 'vitest';

export interface ReceivedWebhook {
  id: string;
  timestamp: number;
  signature: string;
  body: string;
  headers: IncomingHttpHeaders;
}

export function received(request: { headers: IncomingHttpHeaders; body: Buffer }): ReceivedWebhook {
  return {
    id: String(request.headers['webhook-id']),
    timestamp: Number(request.headers['webhook-timestamp']),
    signature: String(request.headers['webhook-signature']),
    body: request.body.toString('utf8'),
    headers: request.headers,
  };
}

function standardHeaders(w: ReceivedWebhook, signature = w.signature): Record<string, string> {
  return { 'webhook-id': w.id, 'webhook-timestamp': String(w.timestamp), 'webhook-signature': signature };
}

/** `new Webhook(secret).verify(body, headers)` against the real clock: throws unless the delivery is authentic. */
export function verify(secret: string, w: ReceivedWebhook, signature?: string): unknown {
  return new Webhook(secret).verify(w.body, standardHeaders(w, signature));
}

/**
 * The same verification for deliveries made on a fake clock: the library checks the timestamp against Date.now(),
 * so Date is set to the attempt's own time for the (synchronous) call.
 */
export function verifyAt(secret: string, w: ReceivedWebhook, signature?: string): unknown {
  vi.useFakeTimers({ toFake: ['Date'], now: w.timestamp * 1000 });
  try {
    return verify(secret, w, signature);
  } finally {
    vi.useRealTimers();
  }
}

/** Polls `check` until it returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function until<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
