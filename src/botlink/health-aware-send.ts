/**
 * A turn's channel request, sent the way the endpoint's health says (endpoint-health.ts): waited for up to the
 * protocol's deadline unless the endpoint is down; not waited for when down. A down endpoint's request is still sent
 * and runs to the deadline (protocol §8) after the turn went on, so the integrator still gets the message and the
 * health learns when the endpoint answers again.
 *
 * A waited request's deadline is the turn's deadline, so its outcome (a timeout included) is recorded before the turn
 * goes on: the next message, in any conversation, already sees the failure.
 */
import type { BotLinkClient, BotLinkExchange, SendChannelRequest } from './client.ts';
import { healthOutcomeOf, waitBudget, type EndpointWait } from './endpoint-health.ts';
import type { EndpointHealthTracker } from './endpoint-health-tracker.ts';

export type HealthAwareResult = { exchange: BotLinkExchange; wait: EndpointWait } | { exchange: null; wait: EndpointWait };

/** The problem in words for the integration page: what failed, never the body. */
function problemOf(exchange: BotLinkExchange, timeoutMs: number): string {
  const o = exchange.outcome;
  if (o.outcome === 'answer') return 'answer';
  if (o.reason === 'timeout') return `no answer within ${timeoutMs} ms`;
  if (o.reason === 'status') return `HTTP ${exchange.httpStatus ?? '?'}`;
  return `${o.reason}: ${o.message}`.slice(0, 200);
}

export function recordExchange(health: EndpointHealthTracker, workspaceId: string, endpointUrl: string, exchange: BotLinkExchange, timeoutMs: number): void {
  // A request that waited for a free connection until it gave up was never sent: our load, not the endpoint's failure.
  // Counted, it took a healthy endpoint down whenever this engine was overloaded, and then nothing was waited for.
  if (exchange.neverSent === true) return;
  const o = exchange.outcome;
  const kind = healthOutcomeOf(o.outcome === 'answer' ? 'answer' : o.reason, exchange.httpStatus);
  if (kind !== null) health.record(workspaceId, endpointUrl, kind, exchange.latencyMs, problemOf(exchange, timeoutMs));
}

export async function sendWithHealth(
  deps: { botlink: BotLinkClient; health: EndpointHealthTracker },
  workspaceId: string,
  input: SendChannelRequest & { timeoutMs: number; signal: AbortSignal },
): Promise<HealthAwareResult> {
  const { health } = deps;
  const current = await health.current(workspaceId, input.endpointUrl);
  const budget = waitBudget(current, input.timeoutMs);
  const wait: EndpointWait = { state: current.state, decision: budget.decision, waitMs: budget.waitMs };

  if (budget.decision === 'wait') {
    health.counted('wait');
    // The turn's signal is the request's: a barge-in cancels it, and a cancelled request tells the health nothing.
    const exchange = await deps.botlink.send(input);
    recordExchange(health, workspaceId, input.endpointUrl, exchange, input.timeoutMs);
    return { exchange, wait };
  }

  if (!health.mayDetach(workspaceId)) {
    health.counted('not_sent');
    return { exchange: null, wait: { ...wait, decision: 'not_sent' } };
  }
  health.counted('not_waited');
  // Not even a refused connection is waited for: the turn goes on now, whatever the request does. The turn's signal
  // does not cancel it, so its outcome (a recovery, say) still reaches the health.
  const { signal: _turnSignal, ...detachedInput } = input;
  const sending = deps.botlink.send(detachedInput).then((exchange) => {
    recordExchange(health, workspaceId, input.endpointUrl, exchange, input.timeoutMs);
    return exchange;
  });
  health.detach(workspaceId, sending);
  return { exchange: null, wait };
}
