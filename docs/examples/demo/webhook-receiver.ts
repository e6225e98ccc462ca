/**
 * The integrator's webhook receiver: one HTTPS URL per event, every delivery verified with the official Standard
 * Webhooks library (`standardwebhooks`), as docs/webhooks.md tells integrators to. The demo uses the library rather
 * than our own code on purpose: it shows that what Botlink signs verifies with the tool an integrator really uses.
 * (It is a devDependency, which `npm install` in a clone installs.)
 */
import { Webhook } from 'standardwebhooks';
import { startLoopbackServer, type LoopbackServer } from './loopback.ts';
import type { Transcript } from './transcript.ts';

export interface ReceivedWebhook {
  event: string;
  id: string;
  verified: boolean;
  /** Why verification failed, when it did. */
  error?: string;
  payload?: Record<string, unknown>;
}

export interface WebhookReceiver extends LoopbackServer {
  received: ReceivedWebhook[];
  /** The URL for one event; `secret` is the `whsec_` secret Botlink showed when it was set. */
  url(event: string): string;
  setSecret(event: string, secret: string): void;
  /** Waits until every one of `events` arrived (or `timeoutMs` passed); returns those still missing. */
  waitFor(events: string[], timeoutMs?: number): Promise<string[]>;
}

export async function startWebhookReceiver(transcript: Transcript): Promise<WebhookReceiver> {
  const secrets = new Map<string, string>();
  const received: ReceivedWebhook[] = [];
  const server = await startLoopbackServer((req, res, body) => {
    const event = /^\/hooks\/([a-z_]+)$/.exec(req.url ?? '')?.[1] ?? '?';
    const id = String(req.headers['webhook-id'] ?? '');
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    try {
      const secret = secrets.get(event);
      if (!secret) throw new Error(`no secret for ${event}`);
      // Throws unless the signature is ours and the timestamp is within 5 minutes.
      const payload = new Webhook(secret).verify(body.toString('utf8'), headers) as Record<string, unknown>;
      received.push({ event, id, verified: true, payload });
      transcript.line('webhook', `${event} verified (webhook-id ${id})${summary(payload)}`);
      res.writeHead(204).end();
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      received.push({ event, id, verified: false, error });
      transcript.line('webhook', `${event} NOT verified (webhook-id ${id}): ${error}`);
      res.writeHead(400).end();
    }
  });
  return {
    ...server,
    received,
    url: (event) => `${server.origin}/hooks/${event}`,
    setSecret: (event, secret) => void secrets.set(event, secret),
    async waitFor(events, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const missing = events.filter((e) => !received.some((r) => r.event === e));
        if (missing.length === 0 || Date.now() > deadline) return missing;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

function summary(payload: Record<string, unknown>): string {
  if (payload.event === 'new_lead') return `: ${String(payload.name)} <${String(payload.email)}>`;
  if (payload.event === 'escalation') return `: ${String(payload.type)}, "${String(payload.visitor_message)}"`;
  if (payload.event === 'new_chat') return `: "${String(payload.visitor_message)}"`;
  return '';
}
