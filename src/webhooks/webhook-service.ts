/**
 * The workspace's webhook settings and delivery log (docs/interfaces.md, Dashboard API; protocol §6): one URL per event, each
 * with its own `whsec_` secret (sealed at rest, shown in the answer that made it and never again), rotation with a
 * 24-hour overlap, the test button, and the log with manual retry.
 */
import { randomUUID } from 'node:crypto';
import type { DeliveryLogRow, WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import type { Db } from '../../db/database.ts';
import type { WebhookAttempt, WebhookDeliveryStatus, WebhookEndpoint, WebhookSubscribableEvent } from '../../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import type { GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { DeliveryWorker } from './delivery-worker.ts';
import { subscribableEvents } from './events.ts';
import { DEFAULT_LIST_LIMIT } from '../limits.ts';
import { SECRET_ROTATION_OVERLAP_MS, TEST_WAIT_MS } from './limits.ts';
import { recordEvent } from './outbox.ts';
import { generateSecret, secretHint } from './signing.ts';
import { webhookSecretContext } from '../secrets/contexts.ts';

/** How often the test button looks at the row while it waits for an outcome another engine may write. */
const TEST_POLL_MS = 100;

export interface EndpointView {
  event: WebhookSubscribableEvent;
  url: string;
  secret_hint: string;
  enabled: boolean;
  disabled_at: string | null;
  /** Why deliveries stopped, in a sentence: 410 Gone, or 5 days of failures. */
  disabled_reason: string | null;
  last_success_at: string | null;
  last_failure_at: string | null;
  /** The first failure since the last success; the endpoint is disabled 5 days after it if nothing succeeds. */
  failing_since: string | null;
  /** After a rotation: until when the previous secret signs as well; null when it no longer does. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface AttemptView {
  attempt: number;
  started_at: string;
  url: string;
  status: 'succeeded' | 'failed';
  http_status: number | null;
  latency_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

export interface DeliveryView {
  id: string;
  /** The `webhook-id` header of every attempt (the outbox id). */
  webhook_id: string;
  event: string;
  kind: 'event' | 'test';
  status: WebhookDeliveryStatus;
  attempt_count: number;
  /** When pending: the next attempt. */
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
  payload: unknown;
  attempts: AttemptView[];
}

export function isSubscribableEvent(event: string): event is WebhookSubscribableEvent {
  return (subscribableEvents as readonly string[]).includes(event);
}

export function createWebhookService(deps: {
  db: Db;
  repository: WebhooksRepository;
  secrets: SecretBox;
  http: Pick<GuardedClient, 'validateUrl'>;
  worker: Pick<DeliveryWorker, 'wake' | 'whenRecorded'>;
  now?: () => number;
}) {
  const { db, repository, secrets, http, worker } = deps;
  const now = deps.now ?? Date.now;

  function eventOf(event: string): WebhookSubscribableEvent {
    if (!isSubscribableEvent(event)) {
      throw new AppError('not_found', `There is no webhook event ${JSON.stringify(event)}; the events are ${subscribableEvents.join(', ')}.`);
    }
    return event;
  }

  async function checkUrl(url: string): Promise<string> {
    const verdict = await http.validateUrl(url);
    if (!verdict.ok) throw new AppError('invalid_url', `url is not usable: ${verdict.reason}`, [{ field: 'url', message: verdict.reason }]);
    return verdict.url.href;
  }

  async function endpoint(workspaceId: string, event: string): Promise<WebhookEndpoint> {
    const row = await repository.findEndpoint(workspaceId, eventOf(event));
    if (!row) throw notFound(`The webhook for ${event}`);
    return row;
  }

  async function deliveryView(workspaceId: string, id: string): Promise<DeliveryView> {
    const row = await repository.findDelivery(workspaceId, id);
    if (!row) throw notFound('The delivery');
    const attempts = await repository.attemptsOf([row.id]);
    return toDeliveryView(row, attempts);
  }

  return {
    async list(workspaceId: string): Promise<EndpointView[]> {
      const rows = await repository.listEndpoints(workspaceId);
      return rows.map((r) => toEndpointView(r, now()));
    },

    /**
     * Sets the URL of an event. The first time, a secret is made and shown in this answer only. Later, the secret
     * is kept (changing the URL must not break a receiver that verifies) and a disabled endpoint is enabled again.
     */
    async put(workspaceId: string, eventName: string, input: { url: string }): Promise<EndpointView & { secret?: string }> {
      const event = eventOf(eventName);
      const url = await checkUrl(input.url);
      const at = new Date(now());
      const updated = await repository.updateEndpointUrl(workspaceId, event, url, at);
      if (updated) {
        worker.wake([updated.id]);
        return toEndpointView(updated, now());
      }
      const id = randomUUID();
      const secret = generateSecret();
      const created = await repository.createEndpoint({
        id,
        workspace_id: workspaceId,
        event,
        url,
        secret_sealed: secrets.seal(secret, webhookSecretContext(id)),
        secret_hint: secretHint(secret),
        now: at,
      });
      if (!created) {
        // A concurrent PUT created it a moment ago; this one only sets the URL.
        const row = await repository.updateEndpointUrl(workspaceId, event, url, at);
        if (!row) throw new AppError('conflict', 'The webhook changed while it was being saved; try again.');
        return toEndpointView(row, now());
      }
      return { ...toEndpointView(created, now()), secret };
    },

    /** A new secret, shown once; the previous one keeps signing beside it for SECRET_ROTATION_OVERLAP_MS. */
    async rotateSecret(workspaceId: string, eventName: string): Promise<EndpointView & { secret: string }> {
      const event = eventOf(eventName);
      const secret = generateSecret();
      const row = await repository.rotateSecret(workspaceId, event, {
        sealed: (endpointId) => secrets.seal(secret, webhookSecretContext(endpointId)),
        hint: secretHint(secret),
        previousUntil: new Date(now() + SECRET_ROTATION_OVERLAP_MS),
        now: new Date(now()),
      });
      if (!row) throw notFound(`The webhook for ${event}`);
      return { ...toEndpointView(row, now()), secret };
    },

    async remove(workspaceId: string, eventName: string): Promise<void> {
      const removed = await repository.deleteEndpoint(workspaceId, eventOf(eventName), new Date(now()));
      if (!removed) throw notFound(`The webhook for ${eventName}`);
    },

    /**
     * The test button (protocol §4.6, §6): the `test` event, recorded in the outbox and delivered like any other (signed,
     * through the guarded client) to the URL set for `event`; answers the delivery with its attempt once the outcome
     * is written, or as it stands after TEST_WAIT_MS. It has one attempt and does not count toward the endpoint's
     * health; a disabled endpoint can be tested before it is enabled again.
     */
    async test(workspaceId: string, eventName: string): Promise<DeliveryView> {
      const target = await endpoint(workspaceId, eventName);
      const deliveryId = randomUUID();
      const recorded = worker.whenRecorded(deliveryId, TEST_WAIT_MS);
      await db.transaction().execute(async (trx) => {
        const eventId = await recordEvent(trx, workspaceId, { event: 'test' });
        await repository.queueDelivery(trx, { id: deliveryId, eventId, workspaceId, endpointId: target.id, event: 'test', kind: 'test', now: new Date(now()) });
      });
      worker.wake([target.id]);
      const deadline = Date.now() + TEST_WAIT_MS;
      let settled = false;
      void recorded.then(() => (settled = true));
      // The outcome may be written by another engine process: the row is read as well.
      while (!settled && Date.now() < deadline) {
        await Promise.race([recorded, new Promise((resolve) => setTimeout(resolve, TEST_POLL_MS))]);
        if (settled) break;
        const row = await repository.findDelivery(workspaceId, deliveryId);
        if (row && row.attempt_count > 0) break;
      }
      return deliveryView(workspaceId, deliveryId);
    },

    async deliveries(
      workspaceId: string,
      filters: { event?: string; status?: WebhookDeliveryStatus; webhookId?: string; before?: Date; limit?: number },
    ): Promise<{ deliveries: DeliveryView[]; next_before: string | null }> {
      const limit = filters.limit ?? DEFAULT_LIST_LIMIT;
      const rows = await repository.listDeliveries(workspaceId, {
        ...(filters.event ? { event: filters.event } : {}),
        ...(filters.status ? { status: filters.status } : {}),
        ...(filters.webhookId ? { eventId: filters.webhookId } : {}),
        ...(filters.before ? { before: filters.before } : {}),
        limit,
      });
      const attempts = await repository.attemptsOf(rows.map((r) => r.id));
      const byDelivery = new Map<string, WebhookAttempt[]>();
      for (const a of attempts) byDelivery.set(a.delivery_id, [...(byDelivery.get(a.delivery_id) ?? []), a]);
      return {
        deliveries: rows.map((r) => toDeliveryView(r, byDelivery.get(r.id) ?? [])),
        next_before: rows.length === limit ? iso(rows.at(-1)!.created_at) : null,
      };
    },

    async delivery(workspaceId: string, id: string): Promise<DeliveryView> {
      return deliveryView(workspaceId, id);
    },

    /** A manual retry: one attempt now, with the same webhook-id; a failed delivery's schedule resumes if it had attempts left. */
    async retry(workspaceId: string, id: string): Promise<DeliveryView> {
      const row = await repository.findDelivery(workspaceId, id);
      if (!row) throw notFound('The delivery');
      if (row.endpoint_id === null) {
        throw new AppError('conflict', 'The webhook this delivery was for has been deleted; set a URL for the event again and new events go there.');
      }
      const endpoints = await repository.listEndpoints(workspaceId);
      const target = endpoints.find((e) => e.id === row.endpoint_id);
      if (target?.disabled_at && row.kind === 'event') {
        throw new AppError('conflict', `The webhook for ${target.event} is disabled (${target.disabled_reason ?? 'no reason recorded'}). Save its URL again to enable it, then retry.`, [
          { field: 'event', message: 'is switched off: save its URL again to switch it on' },
        ]);
      }
      await repository.requeue(workspaceId, id, new Date(now()));
      worker.wake([row.endpoint_id]);
      return deliveryView(workspaceId, id);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;

const iso = (value: Date | string | null): string | null => (value == null ? null : new Date(value).toISOString());

function toEndpointView(row: WebhookEndpoint, at: number): EndpointView {
  const previousUntil = row.previous_secret_expires_at == null ? null : new Date(row.previous_secret_expires_at);
  return {
    event: row.event,
    url: row.url,
    secret_hint: row.secret_hint,
    enabled: row.disabled_at == null,
    disabled_at: iso(row.disabled_at),
    disabled_reason: row.disabled_reason,
    last_success_at: iso(row.last_success_at),
    last_failure_at: iso(row.last_failure_at),
    failing_since: iso(row.failing_since),
    previous_secret_expires_at: previousUntil && previousUntil.getTime() > at ? previousUntil.toISOString() : null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

function toDeliveryView(row: DeliveryLogRow, attempts: readonly WebhookAttempt[]): DeliveryView {
  return {
    id: row.id,
    webhook_id: row.event_id,
    event: row.event,
    kind: row.kind,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    last_status: row.last_status,
    last_error: row.last_error,
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
    payload: row.payload,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      started_at: iso(a.started_at)!,
      url: a.url,
      status: a.status,
      http_status: a.http_status,
      latency_ms: a.latency_ms,
      error: a.error,
      response_excerpt: a.response_excerpt,
    })),
  };
}
