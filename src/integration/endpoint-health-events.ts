/**
 * What endpoint health does outside a turn: the probe of a down endpoint, and what a change of state causes (the
 * owner's notification and the `endpoint_down` / `endpoint_recovered` webhook event, written in the transaction that
 * stores the change, so each happens once however many processes saw it).
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { CHANNEL_TIMEOUT_MS } from '../limits.ts';
import { integrationPageUrl, timestamp } from '../webhooks/events.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { buildChannelRequest } from '../botlink/channel-request.ts';
import type { BotLinkClient } from '../botlink/client.ts';
import type { EndpointHealth, HealthTransition } from '../botlink/endpoint-health.ts';
import type { EndpointHealthTracker } from '../botlink/endpoint-health-tracker.ts';
import { recordExchange } from '../botlink/health-aware-send.ts';

/** The probe's words: integrators see them in their logs, so they say what this is. */
export const PROBE_MESSAGE = 'Botlink health check: no customer is waiting for this answer.';
export const PROBE_SESSION_ID = 'botlink-health-probe';

/**
 * One probe: a signed `webchat` channel request (the kind the dashboard's test button sends, protocol §4.6) with
 * `X-Service-Probe: 1`. A channel request rather than the tools manifest, because it is the request that failed: same
 * URL, same signature, same answer checks; many endpoints serve no tools at all.
 */
export async function probeEndpoint(
  deps: {
    botlink: BotLinkClient;
    health: EndpointHealthTracker;
    credentials: (workspaceId: string) => Promise<{ endpointUrl: string; key: string } | undefined>;
  },
  workspaceId: string,
  endpointUrl: string,
): Promise<void> {
  const credentials = await deps.credentials(workspaceId);
  // The endpoint was changed or removed since it went down: the new one starts healthy, nothing to probe.
  if (!credentials || credentials.endpointUrl !== endpointUrl) return;
  const request = buildChannelRequest({ channel: 'webchat', conversationId: PROBE_SESSION_ID, message: PROBE_MESSAGE, language: 'en', customerPhone: null, now: new Date() });
  const exchange = await deps.botlink.send({ endpointUrl, key: credentials.key, request, timeoutMs: CHANNEL_TIMEOUT_MS, probe: true });
  recordExchange(deps.health, workspaceId, endpointUrl, exchange, CHANNEL_TIMEOUT_MS);
}

/** Going down and recovering (from probing) become a notification and a webhook event, in the caller's transaction. */
export async function recordHealthTransition(
  trx: Db,
  input: { workspaceId: string; transition: HealthTransition; health: EndpointHealth; publicUrl: string },
): Promise<void> {
  const { workspaceId, transition, health } = input;
  const at = new Date(transition.at);
  if (transition.to === 'down') {
    const problem = health.lastProblem ?? 'no answer';
    await sessionsRepository(trx).addNotification({
      id: randomUUID(),
      workspace_id: workspaceId,
      session_id: null,
      kind: 'endpoint_down',
      message: `Your endpoint ${health.endpointUrl} stopped answering (${problem}). Customers are answered by the built-in AI without waiting for it until it answers again.`,
    });
    await recordEvent(trx, workspaceId, {
      event: 'endpoint_down',
      endpoint_url: health.endpointUrl,
      problem,
      failures: health.consecutiveFailures,
      timestamp: timestamp(at),
      dashboard_url: integrationPageUrl(input.publicUrl),
    });
    return;
  }
  if (transition.to === 'healthy' && transition.from === 'probing') {
    await sessionsRepository(trx).addNotification({
      id: randomUUID(),
      workspace_id: workspaceId,
      session_id: null,
      kind: 'endpoint_recovered',
      message: `Your endpoint ${health.endpointUrl} answers again; customers' questions go to it as before.`,
    });
    await recordEvent(trx, workspaceId, { event: 'endpoint_recovered', endpoint_url: health.endpointUrl, timestamp: timestamp(at), dashboard_url: integrationPageUrl(input.publicUrl) });
  }
}
