/**
 * The health of an integrator's endpoint (docs/architecture.md, "Endpoint health"): a circuit breaker over the
 * outcomes of its channel requests, so that a dead endpoint stops costing every turn its full deadline while no answer
 * of a healthy (even a slow but healthy) endpoint is missed. Pure: outcomes in, the next health out; the tracker
 * (endpoint-health-tracker.ts) stores it in the database so every process on it shares one view.
 *
 *   healthy ──failure──▶ degraded ──3 failures in a row──▶ down ──a response──▶ probing ──3 responses──▶ healthy
 *      ▲                    │  (also from healthy)                                 │
 *      └──20 responses──────┘                                        failure ──────┴──▶ down
 *
 * How long a turn waits follows from the state (`waitBudget`): healthy, degraded and probing, the protocol's deadline
 * (protocol §8: 3.5 s on the phone, 6 s otherwise); down, not at all. The breaker never shortens a wait: an answer that
 * comes within the deadline is never lost because of what other requests did. The request itself always runs to the
 * protocol's deadline, so the health learns what really happened.
 */

export const HEALTH_STATES = ['healthy', 'degraded', 'down', 'probing'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/**
 * What one channel request told about the endpoint. `answer` and `invalid` are responses (the endpoint is there and
 * quick to say so: a 4xx, bad JSON, an empty reply cost a turn nothing); `timeout`, `connection` (refused, reset, TLS,
 * DNS) and `status_5xx` are failures (the integrator's side is broken, and a gateway's 5xx can take as long as a
 * timeout).
 */
export const HEALTH_OUTCOMES = ['answer', 'invalid', 'timeout', 'connection', 'status_5xx'] as const;
export type HealthOutcomeKind = (typeof HEALTH_OUTCOMES)[number];

export interface HealthOutcome {
  /** When the outcome was known, ms since the epoch. */
  at: number;
  kind: HealthOutcomeKind;
  /** From sending the request until the outcome was known. */
  latencyMs: number;
}

export interface EndpointHealth {
  /** The URL these outcomes belong to: a new URL starts healthy. */
  endpointUrl: string;
  state: HealthState;
  /** When the current state began, ms since the epoch. */
  since: number;
  consecutiveFailures: number;
  consecutiveResponses: number;
  lastFailureAt: number | null;
  /** The newest outcomes, oldest first, at most HEALTH_WINDOW. */
  recent: HealthOutcome[];
  /** The last failure in words (`timeout after 3500 ms`), for the integration page; never the response body. */
  lastProblem: string | null;
}

/** A change of state, for the notification, the webhook event and the log. */
export interface HealthTransition {
  from: HealthState;
  to: HealthState;
  at: number;
}

// Tunables of the breaker, in one place (documented in docs/architecture.md, "Endpoint health").
/** Outcomes kept per endpoint for the error mix and the answer-time p99 (shown on the integration page). */
export const HEALTH_WINDOW = 50;
/** Outcomes older than this no longer count for the mix and the p99, ms. */
export const HEALTH_WINDOW_MS = 10 * 60_000;
/** Failures in a row that take the endpoint down. */
export const DOWN_AFTER_FAILURES = 3;
/** A failure more than this after the previous one starts a new count: one timeout an hour never takes it down, ms. */
export const FAILURE_STREAK_MS = 60_000;
/** Responses in a row that bring a probing endpoint back to healthy. */
export const RECOVERED_AFTER_RESPONSES = 3;
/** Responses in a row after which a degraded endpoint counts as healthy again. */
export const HEALTHY_AFTER_RESPONSES = 20;

export function initialHealth(endpointUrl: string, at: number): EndpointHealth {
  return { endpointUrl, state: 'healthy', since: at, consecutiveFailures: 0, consecutiveResponses: 0, lastFailureAt: null, recent: [], lastProblem: null };
}

export const isFailure = (kind: HealthOutcomeKind): boolean => kind === 'timeout' || kind === 'connection' || kind === 'status_5xx';

/** The health after one more outcome, and the transition it caused (if any). */
export function applyOutcome(
  health: EndpointHealth,
  outcome: HealthOutcome,
  problem?: string,
): { health: EndpointHealth; transition: HealthTransition | null } {
  const recent = [...health.recent, outcome].slice(-HEALTH_WINDOW);
  let next: EndpointHealth;
  if (isFailure(outcome.kind) && isStale(health, outcome)) {
    // Sent before the endpoint was last seen answering: it tells nothing new (the timeouts of requests sent in the
    // last seconds of an outage arrive after the recovery). Kept for the mix, no effect on the state.
    return { health: { ...health, recent }, transition: null };
  }
  if (isFailure(outcome.kind)) {
    const streak = health.lastFailureAt !== null && outcome.at - health.lastFailureAt <= FAILURE_STREAK_MS ? health.consecutiveFailures : 0;
    const consecutiveFailures = streak + 1;
    const state: HealthState =
      health.state === 'down' || health.state === 'probing' || consecutiveFailures >= DOWN_AFTER_FAILURES ? 'down' : 'degraded';
    next = { ...health, state, consecutiveFailures, consecutiveResponses: 0, lastFailureAt: outcome.at, recent, lastProblem: problem ?? outcome.kind };
  } else {
    const consecutiveResponses = health.consecutiveResponses + 1;
    let state = health.state;
    if (state === 'down') state = 'probing';
    if (state === 'probing' && consecutiveResponses >= RECOVERED_AFTER_RESPONSES) state = 'healthy';
    if (state === 'degraded' && consecutiveResponses >= HEALTHY_AFTER_RESPONSES) state = 'healthy';
    next = { ...health, state, consecutiveFailures: 0, consecutiveResponses, recent };
  }
  if (next.state === health.state) return { health: next, transition: null };
  return { health: { ...next, since: outcome.at }, transition: { from: health.state, to: next.state, at: outcome.at } };
}

/** A failure whose request was sent before the newest response known arrived. */
function isStale(health: EndpointHealth, failure: HealthOutcome): boolean {
  const sentAt = failure.at - failure.latencyMs;
  for (let i = health.recent.length - 1; i >= 0; i--) {
    const o = health.recent[i]!;
    if (!isFailure(o.kind)) return sentAt < o.at;
  }
  return false;
}

/** Outcomes in order; every transition they caused, in order. */
export function applyOutcomes(
  health: EndpointHealth,
  outcomes: readonly (HealthOutcome & { problem?: string })[],
): { health: EndpointHealth; transitions: HealthTransition[] } {
  const transitions: HealthTransition[] = [];
  let current = health;
  for (const outcome of [...outcomes].sort((a, b) => a.at - b.at)) {
    const step = applyOutcome(current, outcome, outcome.problem);
    current = step.health;
    if (step.transition) transitions.push(step.transition);
  }
  return { health: current, transitions };
}

/** The recent outcomes still inside the window at `at`. */
function live(health: EndpointHealth, at: number): HealthOutcome[] {
  return health.recent.filter((o) => at - o.at <= HEALTH_WINDOW_MS);
}

/** The p99 (nearest rank) of the recent answer times, or null when there is no recent answer: a figure for the
 * integration page only; it never decides how long a turn waits. */
export function answerP99(health: EndpointHealth, at: number): number | null {
  const times = live(health, at)
    .filter((o) => o.kind === 'answer')
    .map((o) => o.latencyMs)
    .sort((a, b) => a - b);
  if (times.length === 0) return null;
  return times[Math.min(times.length - 1, Math.ceil(0.99 * times.length) - 1)]!;
}

/** How many of each outcome the window holds, every kind named (zero included). */
export function outcomeMix(health: EndpointHealth, at: number): Record<HealthOutcomeKind, number> {
  const mix = Object.fromEntries(HEALTH_OUTCOMES.map((k) => [k, 0])) as Record<HealthOutcomeKind, number>;
  for (const o of live(health, at)) mix[o.kind] += 1;
  return mix;
}

/**
 * What a turn does with the endpoint in this state:
 * - `wait`: wait up to the protocol's deadline (healthy, degraded, probing);
 * - `not_waited`: send, but answer without waiting (down).
 */
export type WaitDecision = 'wait' | 'not_waited';

/** What a turn did about the endpoint's health; recorded on the turn (GET /v1/sessions/{id}, `botlink.endpoint`). */
export interface EndpointWait {
  state: HealthState;
  /** `not_sent`: down, and too many requests already running for it (MAX_DETACHED_PER_ENDPOINT). */
  decision: WaitDecision | 'not_sent';
  /** How long the turn was ready to wait, ms. */
  waitMs: number;
}

/**
 * Only a down endpoint is not waited for. Every other state waits the whole deadline: how fast an endpoint answered
 * before says nothing about whether its next answer, within the deadline, will come (docs/architecture.md,
 * "Endpoint health").
 */
export function waitBudget(health: EndpointHealth, deadlineMs: number): { decision: WaitDecision; waitMs: number } {
  if (health.state === 'down') return { decision: 'not_waited', waitMs: 0 };
  return { decision: 'wait', waitMs: deadlineMs };
}

/** The health outcome of a channel request's result (protocol §7); null for a request we cancelled ourselves. */
export function healthOutcomeOf(reason: string, httpStatus: number | null): HealthOutcomeKind | null {
  switch (reason) {
    case 'answer':
      return 'answer';
    case 'aborted':
      return null;
    case 'timeout':
      return 'timeout';
    case 'connection':
    case 'tls':
    case 'refused_address':
    case 'invalid_url':
      return 'connection';
    default:
      return httpStatus !== null && httpStatus >= 500 ? 'status_5xx' : 'invalid';
  }
}
