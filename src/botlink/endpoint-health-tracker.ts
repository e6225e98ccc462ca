/**
 * The process side of endpoint health (endpoint-health.ts holds the rules): what this process saw is buffered and
 * written to the workspace's `endpoint_health` row under its row lock, merged with what other processes wrote, every
 * HEALTH_FLUSH_MS (at once when it changes the state); the row is read again when this process's copy is older than
 * HEALTH_REFRESH_MS. So a process learns what another saw within about a second, and a busy endpoint costs at most a
 * few writes a second, not one per turn.
 *
 * A state change is written together with what it causes, in one transaction: the owner's notification, the
 * `endpoint_down` / `endpoint_recovered` webhook event (docs/webhooks.md) and a log line. While an endpoint is down,
 * one process at a time sends a probe (a signed channel request marked `X-Service-Probe: 1`, docs/protocol.md §4.1)
 * every HEALTH_PROBE_INTERVAL_MS, so a recovery is seen even when no customer is writing.
 */
import type { Db } from '../../db/database.ts';
import { endpointHealthRepository, type EndpointHealthRow } from '../../db/repositories/endpoint-health.repository.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import {
  applyOutcome,
  applyOutcomes,
  HEALTH_WINDOW,
  initialHealth,
  isFailure,
  type EndpointHealth,
  type HealthOutcome,
  type HealthOutcomeKind,
  type HealthTransition,
} from './endpoint-health.ts';

/** How old this process's copy of a row may be before it is read again, ms. */
export const HEALTH_REFRESH_MS = 1_000;
/** A copy older than this many refresh periods is read again before it is used. */
export const STALE_AFTER_REFRESHES = 5;
/** How long outcomes wait to be written together, ms (a change of state is written at once). */
export const HEALTH_FLUSH_MS = 250;
/** While an endpoint is down, a probe at most this often (across all processes), ms. */
export const HEALTH_PROBE_INTERVAL_MS = 15_000;
/** Requests this process keeps running for one endpoint after their turns stopped waiting; beyond it, not sent. */
export const MAX_DETACHED_PER_ENDPOINT = 256;
/** One `warn` line per endpoint at most this often while its requests fail, ms (with the count since the last one). */
export const HEALTH_LOG_INTERVAL_MS = 60_000;

type Executor = Db;

export interface EndpointHealthTrackerDeps {
  db: Db;
  logger: Logger;
  metrics?: Pick<Metrics, 'endpointTransitions' | 'endpointWaits'>;
  now?: () => number;
  /** Written in the transaction of the state change: the notification and the webhook event. */
  onTransition?: (trx: Executor, workspaceId: string, transition: HealthTransition, health: EndpointHealth) => Promise<void>;
  /** Sends one probe to the endpoint; its outcome comes back through `record`. */
  probe?: (workspaceId: string, endpointUrl: string) => Promise<void>;
  refreshMs?: number;
  flushMs?: number;
  probeIntervalMs?: number;
}

interface Entry {
  /** As last read or written, with this process's unwritten outcomes applied. */
  health: EndpointHealth;
  readAt: number;
  loading: Promise<EndpointHealth> | null;
  pending: (HealthOutcome & { problem?: string })[];
  /** Writes of this entry's outcomes begun and finished: a read that overlapped a write may miss what it wrote. */
  writesBegun: number;
  writesDone: number;
  detached: number;
  /** Failures since the last warn line, and when that line was written. */
  failuresSinceLog: number;
  loggedAt: number;
}

export function fromRow(row: EndpointHealthRow): EndpointHealth {
  return {
    endpointUrl: row.endpoint_url,
    state: row.state,
    since: new Date(row.since).getTime(),
    consecutiveFailures: row.consecutive_failures,
    consecutiveResponses: row.consecutive_responses,
    lastFailureAt: row.last_failure_at === null ? null : new Date(row.last_failure_at).getTime(),
    recent: Array.isArray(row.recent) ? (row.recent as HealthOutcome[]) : [],
    lastProblem: row.last_problem,
  };
}

export function createEndpointHealthTracker(deps: EndpointHealthTrackerDeps) {
  const { db, logger } = deps;
  const now = deps.now ?? Date.now;
  const refreshMs = deps.refreshMs ?? HEALTH_REFRESH_MS;
  const flushMs = deps.flushMs ?? HEALTH_FLUSH_MS;
  const probeIntervalMs = deps.probeIntervalMs ?? HEALTH_PROBE_INTERVAL_MS;
  const entries = new Map<string, Entry>();
  let flushTimer: NodeJS.Timeout | null = null;
  let flushing: Promise<void> = Promise.resolve();
  let probeTimer: NodeJS.Timeout | null = null;
  let stopped = false;

  /** The stored health for this URL; a row of another URL (the endpoint was changed) counts as a new endpoint. */
  async function read(workspaceId: string, endpointUrl: string): Promise<EndpointHealth> {
    const row = await endpointHealthRepository(db).find(workspaceId);
    return row && row.endpoint_url === endpointUrl ? fromRow(row) : initialHealth(endpointUrl, now());
  }

  function newEntry(endpointUrl: string): Entry {
    const health = initialHealth(endpointUrl, now());
    return { health, readAt: 0, loading: null, pending: [], writesBegun: 0, writesDone: 0, detached: 0, failuresSinceLog: 0, loggedAt: 0 };
  }

  function withPending(base: EndpointHealth, pending: Entry['pending']): EndpointHealth {
    return pending.length === 0 ? base : applyOutcomes(base, pending).health;
  }

  function load(workspaceId: string, endpointUrl: string, entry: Entry | undefined): Promise<EndpointHealth> {
    if (entry?.loading) return entry.loading;
    const target = entry ?? newEntry(endpointUrl);
    if (!entry) entries.set(workspaceId, target);
    const writesBefore = target.writesBegun;
    const loading = read(workspaceId, endpointUrl).then(
      (stored) => {
        target.loading = null;
        // Outcomes taken out of `pending` for a write that was not committed when the row was read are in neither:
        // such a read would forget them (a `down` just seen, say), so this process's copy stays and is read again.
        if (target.writesBegun !== writesBefore || target.writesDone !== target.writesBegun) return target.health;
        target.health = withPending(stored, target.pending);
        target.readAt = now();
        return target.health;
      },
      (err: unknown) => {
        target.loading = null;
        target.readAt = now();
        logger.warn({ workspaceId, err: errorText(err) }, 'endpoint health could not be read; using the last known');
        return target.health;
      },
    );
    target.loading = loading;
    return loading;
  }

  function scheduleFlush(immediately: boolean): void {
    if (stopped) return;
    if (immediately) {
      if (flushTimer) clearTimeout(flushTimer);
      flushTimer = null;
      void flush();
      return;
    }
    if (flushTimer) return;
    flushTimer = setTimeout(() => {
      flushTimer = null;
      void flush();
    }, flushMs);
    flushTimer.unref();
  }

  async function flushOne(workspaceId: string, entry: Entry, outcomes: Entry['pending']): Promise<void> {
    if (outcomes.length === 0) return;
    const endpointUrl = entry.health.endpointUrl;
    const written = await db.transaction().execute(async (trx) => {
      const repository = endpointHealthRepository(trx);
      const row = await repository.lock(workspaceId);
      const base = row && row.endpoint_url === endpointUrl ? fromRow(row) : initialHealth(endpointUrl, outcomes[0]!.at);
      const { health, transitions } = applyOutcomes(base, outcomes);
      await repository.save({
        workspace_id: workspaceId,
        endpoint_url: health.endpointUrl,
        state: health.state,
        since: new Date(health.since),
        consecutive_failures: health.consecutiveFailures,
        consecutive_responses: health.consecutiveResponses,
        last_failure_at: health.lastFailureAt === null ? null : new Date(health.lastFailureAt),
        recent: health.recent,
        last_problem: health.lastProblem,
        updated_at: new Date(now()),
      });
      for (const transition of transitions) await deps.onTransition?.(trx, workspaceId, transition, health);
      return { health, transitions };
    });
    for (const t of written.transitions) {
      deps.metrics?.endpointTransitions.inc({ to: t.to });
      const fields = { workspaceId, endpointUrl, from: t.from, to: t.to, problem: written.health.lastProblem };
      if (t.to === 'down') logger.warn(fields, 'the bot-link endpoint is down: turns no longer wait for it');
      else logger.info(fields, `the bot-link endpoint is ${t.to}`);
    }
    entry.health = withPending(written.health, entry.pending);
    entry.readAt = now();
  }

  async function flush(): Promise<void> {
    const run = flushing.then(async () => {
      for (const [workspaceId, entry] of entries) {
        if (entry.pending.length === 0) continue;
        const outcomes = entry.pending.splice(0);
        entry.writesBegun += 1;
        try {
          await flushOne(workspaceId, entry, outcomes);
        } catch (err) {
          // Back in front of what came meanwhile, bounded: a workspace deleted meanwhile must not grow it forever.
          entry.pending = [...outcomes, ...entry.pending].slice(-HEALTH_WINDOW);
          logger.warn({ workspaceId, err: errorText(err) }, 'endpoint health could not be written; kept for the next try');
        } finally {
          entry.writesDone += 1;
        }
      }
    });
    flushing = run.catch(() => {});
    return run;
  }

  function logFailures(workspaceId: string, entry: Entry, kind: HealthOutcomeKind, problem: string | undefined): void {
    entry.failuresSinceLog += 1;
    const t = now();
    if (t - entry.loggedAt < HEALTH_LOG_INTERVAL_MS) return;
    logger.warn(
      { workspaceId, endpointUrl: entry.health.endpointUrl, reason: kind, problem, failures: entry.failuresSinceLog, state: entry.health.state },
      'bot-link endpoint failing',
    );
    entry.failuresSinceLog = 0;
    entry.loggedAt = t;
  }

  async function probeDue(): Promise<void> {
    if (!deps.probe) return;
    const claimed = await endpointHealthRepository(db).claimProbes(new Date(now()), probeIntervalMs, 20);
    await Promise.all(
      claimed.map((c) =>
        deps.probe!(c.workspace_id, c.endpoint_url).catch((err: unknown) => logger.warn({ workspaceId: c.workspace_id, err: errorText(err) }, 'endpoint probe failed to start')),
      ),
    );
  }

  return {
    /** While an endpoint is down, a probe at most this often, ms (the integration page says how often it is tried). */
    probeIntervalMs,

    /** The endpoint's health as this process knows it (read again in the background when older than a second). */
    async current(workspaceId: string, endpointUrl: string): Promise<EndpointHealth> {
      const entry = entries.get(workspaceId);
      if (!entry || entry.health.endpointUrl !== endpointUrl) {
        if (entry) entries.delete(workspaceId);
        return load(workspaceId, endpointUrl, undefined);
      }
      const age = now() - entry.readAt;
      if (age < refreshMs) return entry.health;
      // Slightly old: answer now, read again in the background. Long unread (an idle workspace): read first, so a
      // recovery another process saw meanwhile is not missed.
      if (age < STALE_AFTER_REFRESHES * refreshMs) {
        void load(workspaceId, endpointUrl, entry);
        return entry.health;
      }
      return load(workspaceId, endpointUrl, entry);
    },

    /** One channel request's outcome (a turn's, the test button's or a probe's). */
    record(workspaceId: string, endpointUrl: string, kind: HealthOutcomeKind, latencyMs: number, problem?: string): void {
      let entry = entries.get(workspaceId);
      if (!entry || entry.health.endpointUrl !== endpointUrl) {
        entry = newEntry(endpointUrl);
        entries.set(workspaceId, entry);
      }
      const outcome = { at: now(), kind, latencyMs: Math.round(latencyMs), ...(problem === undefined ? {} : { problem }) };
      entry.pending.push(outcome);
      const step = applyOutcome(entry.health, outcome, problem);
      entry.health = step.health;
      if (isFailure(kind)) logFailures(workspaceId, entry, kind, problem);
      scheduleFlush(step.transition !== null);
    },

    /** Counts what a turn did about the health (botlink_endpoint_waits_total). */
    counted(decision: string): void {
      deps.metrics?.endpointWaits.inc({ decision });
    },

    /** A request whose turn stopped waiting keeps running (bounded per endpoint); false: too many already, not sent. */
    detach(workspaceId: string, running: Promise<unknown>): boolean {
      const entry = entries.get(workspaceId);
      if (!entry) return true;
      if (entry.detached >= MAX_DETACHED_PER_ENDPOINT) return false;
      entry.detached += 1;
      void running.finally(() => (entry.detached -= 1));
      return true;
    },

    mayDetach(workspaceId: string): boolean {
      return (entries.get(workspaceId)?.detached ?? 0) < MAX_DETACHED_PER_ENDPOINT;
    },

    /** The integration changed or went away: forget this process's copy (the row is reset by the next outcome). */
    forget(workspaceId: string): void {
      entries.delete(workspaceId);
    },

    flush,

    /** Starts the probe sweep (down endpoints, one probe per interval across processes). */
    start(): void {
      if (!deps.probe || probeTimer) return;
      const every = Math.max(250, Math.floor(probeIntervalMs / 3));
      probeTimer = setInterval(() => {
        void probeDue().catch((err: unknown) => logger.warn({ err: errorText(err) }, 'endpoint probe sweep failed'));
      }, every);
      probeTimer.unref();
    },

    async stop(): Promise<void> {
      stopped = true;
      if (probeTimer) clearInterval(probeTimer);
      if (flushTimer) clearTimeout(flushTimer);
      probeTimer = flushTimer = null;
      await flush().catch(() => {});
    },
  };
}

export type EndpointHealthTracker = ReturnType<typeof createEndpointHealthTracker>;
