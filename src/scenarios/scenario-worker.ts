/**
 * Plays the scenario runs that wait (docs/scenarios.md, "Several engines"): every engine runs this worker; a run is
 * claimed in the database with a lease (db/repositories/scenarios.repository.ts) renewed while it plays, so exactly one
 * engine plays it, and its result is written only while that engine still holds it. A run asked for on this engine
 * wakes its worker; the others find waiting runs by polling. A run whose engine died is claimed again once its lease
 * ran out and played from the start; after MAX_RUN_ATTEMPTS claims it is finished as failed.
 */
import { randomUUID } from 'node:crypto';
import type { ScenarioRunRow, ScenariosRepository } from '../../db/repositories/scenarios.repository.ts';
import { createLeaseKeeper, type Lease } from '../leases/lease-keeper.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';
import { MAX_RUN_ATTEMPTS, RUN_CONCURRENCY, RUN_POLL_MS } from './limits.ts';
import type { ScenarioRunner } from './scenario-runner.ts';
import type { Scenario } from './scenario-schema.ts';

export interface ScenarioWorkerOptions {
  repository: Pick<ScenariosRepository, 'claimRuns' | 'renewRuns' | 'finishRun' | 'releaseRun'>;
  runner: ScenarioRunner;
  logger: Logger;
  /** Names this engine in `lease_owner`; default a random id. */
  owner?: string;
  /** The run's lease; default LEASE_MS (src/leases/durations.ts). */
  leaseMs?: number;
  /** Default {@link RUN_POLL_MS}. */
  pollMs?: number;
  /** Runs played at once on this engine; default {@link RUN_CONCURRENCY}. */
  concurrency?: number;
}

export function createScenarioWorker(options: ScenarioWorkerOptions) {
  const { repository, runner } = options;
  const log = options.logger.child({ component: 'scenarios' });
  const owner = options.owner ?? `scenarios-${randomUUID()}`;
  const concurrency = options.concurrency ?? RUN_CONCURRENCY;
  const leases = createLeaseKeeper({
    kind: 'scenario_run',
    owner,
    logger: log,
    store: { renew: (ids, o, ms) => repository.renewRuns(ids, o, ms) },
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  const playing = new Set<Promise<void>>();
  const stopping = new AbortController();
  let running = false;
  let poll: NodeJS.Timeout | undefined;
  let pass: Promise<void> | null = null;
  let again = false;

  async function play(row: ScenarioRunRow, lease: Lease): Promise<void> {
    const runLog = log.child({ workspaceId: row.workspace_id, runId: row.id });
    try {
      if (row.attempts > MAX_RUN_ATTEMPTS) {
        const got = `the run was started ${MAX_RUN_ATTEMPTS} times and never finished (its engine stopped each time)`;
        await repository.finishRun(row.id, owner, { passed: 0, failures: [{ run: 1, turn: 0, expectation: 'the run finishes', got }], transcripts: [] });
        return;
      }
      const scenario = (typeof row.definition === 'string' ? JSON.parse(row.definition) : row.definition) as Scenario;
      const signal = AbortSignal.any([lease.signal, stopping.signal]);
      const result = await runner.play({ runId: row.id, workspaceId: row.workspace_id, scenario, runs: row.runs, signal });
      if (!(await repository.finishRun(row.id, owner, result))) runLog.warn('a scenario run was taken over by another engine; this result is not written');
      else runLog.info({ runs: row.runs, passed: result.passed }, 'scenario run done');
    } catch (err) {
      if (stopping.signal.aborted) {
        // Given back: the next claim (here after a restart, or another engine) plays it from the start.
        await repository.releaseRun(row.id, owner).catch((e: unknown) => runLog.warn({ err: e }, 'a scenario run could not be given back; its lease runs out'));
        return;
      }
      if (lease.lost) return;
      runLog.warn({ err }, 'a scenario run failed');
      await repository
        .finishRun(row.id, owner, { passed: 0, failures: [{ run: 1, turn: 0, expectation: 'the run finishes', got: `the run failed: ${errorText(err)}` }], transcripts: [] })
        .catch((e: unknown) => runLog.warn({ err: e }, 'a failed scenario run could not be written; it is claimed again when its lease runs out'));
    } finally {
      lease.end();
    }
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      const free = concurrency - playing.size;
      if (free <= 0) return;
      for (const { row, lease } of await leases.claim((o, ms) => repository.claimRuns(o, ms, free))) {
        const work = play(row, lease).finally(() => {
          playing.delete(work);
          wake();
        });
        playing.add(work);
      }
    } while (again);
  }

  /** Looks for runs now (or right after the look running). */
  function wake(): void {
    if (!running) return;
    if (pass) {
      again = true;
      return;
    }
    pass = drain()
      .catch((err: unknown) => log.warn({ err }, 'looking for scenario runs failed; the next poll tries again'))
      .finally(() => {
        pass = null;
        if (again) wake();
      });
  }

  return {
    owner,
    wake,
    start(): void {
      if (running) return;
      running = true;
      poll = setInterval(wake, options.pollMs ?? RUN_POLL_MS);
      poll.unref();
      wake();
    },
    /** Resolves when no run is being played here (tests). */
    async idle(): Promise<void> {
      while (pass || playing.size > 0) {
        await pass;
        await Promise.all([...playing]);
      }
    },
    /** No new claims; runs being played stop between turns and are given back (played again from the start). */
    async stop(): Promise<void> {
      running = false;
      clearInterval(poll);
      stopping.abort(new Error('The engine is stopping.'));
      await pass;
      await Promise.allSettled([...playing]);
      leases.stop();
    },
  };
}

export type ScenarioWorker = ReturnType<typeof createScenarioWorker>;
