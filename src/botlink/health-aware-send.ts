/**
 * A turn's channel request, sent the way the endpoint's health says (endpoint-health.ts): waited for up to the
 * deadline when healthy; up to the endpoint's own recent p99 with a margin when degraded or probing; not waited for
 * when down. The request always runs to the protocol's deadline (protocol §8), also after the turn stopped waiting, so
 * the integrator still gets the message and the health learns how the endpoint really answered.
 */
import type { BotLinkClient, BotLinkExchange, SendChannelRequest } from './client.ts';
import { healthOutcomeOf, waitBudget, type EndpointWait } from './endpoint-health.ts';
import type { EndpointHealthTracker } from './endpoint-health-tracker.ts';

export type HealthAwareResult = { exchange: BotLinkExchange; wait: EndpointWait } | { exchange: null; wait: EndpointWait; waitedMs: number };

/** The problem in words for the integration page: what failed, never the body. */
function problemOf(exchange: BotLinkExchange, timeoutMs: number): string {
  const o = exchange.outcome;
  if (o.outcome === 'answer') return 'answer';
  if (o.reason === 'timeout') return `no answer within ${timeoutMs} ms`;
  if (o.reason === 'status') return `HTTP ${exchange.httpStatus ?? '?'}`;
  return `${o.reason}: ${o.message}`.slice(0, 200);
}

export function recordExchange(health: EndpointHealthTracker, workspaceId: string, endpointUrl: string, exchange: BotLinkExchange, timeoutMs: number): void {
  const o = exchange.outcome;
  const kind = healthOutcomeOf(o.outcome === 'answer' ? 'answer' : o.reason, exchange.httpStatus);
  if (kind !== null) health.record(workspaceId, endpointUrl, kind, exchange.latencyMs, problemOf(exchange, timeoutMs));
}

export async function sendWithHealth(
  deps: { botlink: BotLinkClient; health: EndpointHealthTracker; now: () => number },
  workspaceId: string,
  input: SendChannelRequest & { timeoutMs: number; signal: AbortSignal },
): Promise<HealthAwareResult> {
  const { health } = deps;
  const current = await health.current(workspaceId, input.endpointUrl);
  const budget = waitBudget(current, input.timeoutMs, deps.now());
  const wait: EndpointWait = { state: current.state, decision: budget.decision, waitMs: budget.waitMs };
  if (budget.decision === 'not_waited' && !health.mayDetach(workspaceId)) {
    health.counted('not_sent');
    return { exchange: null, wait: { ...wait, decision: 'not_sent' }, waitedMs: 0 };
  }
  health.counted(budget.decision);

  // The turn's signal cancels the request only while the turn still waits for it.
  const controller = new AbortController();
  let detached = false;
  const onAbort = (): void => {
    if (!detached) controller.abort();
  };
  input.signal.addEventListener('abort', onAbort, { once: true });
  const sending = deps.botlink.send({ ...input, signal: controller.signal }).then((exchange) => {
    input.signal.removeEventListener('abort', onAbort);
    recordExchange(health, workspaceId, input.endpointUrl, exchange, input.timeoutMs);
    return exchange;
  });
  if (budget.decision === 'wait') return { exchange: await sending, wait };
  if (budget.decision === 'not_waited') {
    // Not even a refused connection is waited for: the turn goes on now, whatever the request does.
    detached = true;
    health.detach(workspaceId, sending);
    return { exchange: null, wait, waitedMs: 0 };
  }

  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const stopWaiting = new Promise<null>((resolve) => {
    timer = setTimeout(resolve, budget.waitMs, null);
    input.signal.addEventListener('abort', () => resolve(null), { once: true });
  });
  const first = await Promise.race([sending, stopWaiting]);
  clearTimeout(timer);
  if (first !== null) return { exchange: first, wait };
  if (input.signal.aborted) {
    // The turn was cancelled (barge-in) while it waited: the request goes with it, as for a healthy endpoint.
    controller.abort();
    return { exchange: await sending, wait };
  }
  detached = true;
  health.detach(workspaceId, sending);
  return { exchange: null, wait, waitedMs: performance.now() - started };
}
