/**
 * Answers a knowledge change moved (docs/scenarios.md, "Answers a knowledge change moved"; issue 39, item 5): after a
 * workspace's knowledge was written (a page edited or deleted, a sync batch, a source synced again), its saved checks
 * are asked again and its web-chat scenarios played again, and what changed is kept for the Knowledge screen.
 *
 * Every knowledge write leaves one mark per workspace (db/repositories/knowledge-checks.repository.ts). Every engine
 * runs this worker; a workspace's re-run is due once its knowledge had no write for RECHECK_QUIET_MS (at most
 * RECHECK_MAX_WAIT_MS after the first), and is claimed in job_claims, so the five pages of a batch make one re-run and
 * two engines that saw writes make one. The work runs here, off the request that wrote.
 */
import { randomUUID } from 'node:crypto';
import type { KnowledgeChecksRepository } from '../../db/repositories/knowledge-checks.repository.ts';
import type { ScenariosRepository } from '../../db/repositories/scenarios.repository.ts';
import { claimedWorkspaceRuns } from '../knowledge/claimed-runs.ts';
import type { KnowledgeAnswer } from '../knowledge/try-question.ts';
import type { Logger } from '../log.ts';
import {
  MAX_KNOWLEDGE_CHECKS,
  MAX_OPEN_RUNS,
  RECHECK_MAX_WAIT_MS,
  RECHECK_POLL_MS,
  RECHECK_QUIET_MS,
  RECHECK_RETRY_MS,
  RECHECK_SCENARIOS,
  RECHECKS_KEPT,
  RUNS_KEPT_PER_SCENARIO,
} from './limits.ts';

/** What a check's answer was and is: compared as the customer reads it, spaces aside. */
export interface CheckResult {
  check_id: string;
  question: string;
  language: string;
  before: string;
  before_source: string;
  after: string;
  after_source: string;
  changed: boolean;
}

/** A scenario played again: its latest run before the change, and the run queued after it. */
export interface ScenarioResult {
  scenario_id: string;
  name: string;
  before: { run_id: string; runs: number; passed: number };
  after_run_id: string;
}

export interface RecheckRun {
  workspaceId: string;
  /** false: nothing to compare (no checks, no scenarios) or the knowledge's version did not change. */
  ran: boolean;
  checks: number;
  changed: number;
  scenarios: number;
}

export interface KnowledgeRechecksDeps {
  repository: KnowledgeChecksRepository;
  scenarios: Pick<ScenariosRepository, 'insertRun' | 'openRuns'>;
  /** The knowledge's version (db/repositories/knowledge-search.repository.ts): changes with any document or phrasing. */
  version: (workspaceId: string) => Promise<string>;
  answer: KnowledgeAnswer;
  /** Scenario runs were queued: this engine's scenario worker looks for them now. */
  wakeScenarios: () => void;
  logger: Logger;
  engine: string;
  leaseMs: number;
  /** Defaults in ./limits.ts; 0 for `intervalMs`: only when asked (`runDue`). */
  intervalMs?: number;
  quietMs?: number;
  maxWaitMs?: number;
  retryMs?: number;
  now?: () => Date;
}

/** Two answers are the same when they read the same: runs of white space count as one. */
export function sameAnswer(a: string, b: string): boolean {
  const norm = (s: string) => s.replace(/\s+/gu, ' ').trim();
  return norm(a) === norm(b);
}

export function createKnowledgeRechecks(deps: KnowledgeRechecksDeps) {
  const { repository, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const quietMs = deps.quietMs ?? RECHECK_QUIET_MS;
  const maxWaitMs = deps.maxWaitMs ?? RECHECK_MAX_WAIT_MS;
  const log = logger.child({ component: 'knowledge-rechecks' });

  async function recheck(workspaceId: string, lost: () => boolean): Promise<{ run: RecheckRun; retry: boolean }> {
    const run: RecheckRun = { workspaceId, ran: false, checks: 0, changed: 0, scenarios: 0 };
    const mark = await repository.mark(workspaceId);
    if (!mark) return { run, retry: false };
    const upTo = new Date(mark.last_at);
    const startedAt = now();
    const version = await deps.version(workspaceId);
    const latest = await repository.latestRecheck(workspaceId);
    const checks = await repository.listChecks(workspaceId, MAX_KNOWLEDGE_CHECKS);
    const scenarios = await repository.knowledgeScenarios(workspaceId, RECHECK_SCENARIOS);
    // A write that changed nothing (a plugin sending its pages again) leaves the version as the last re-run saw it.
    if ((checks.length === 0 && scenarios.length === 0) || latest?.knowledge_version === version) {
      if (!lost()) await repository.clearMark(workspaceId, upTo);
      return { run, retry: false };
    }

    const results: CheckResult[] = [];
    for (const check of checks) {
      if (lost() || runsStopped()) return { run, retry: false };
      const { answer } = await deps.answer(workspaceId, check.question, check.language);
      results.push({
        check_id: check.id,
        question: check.question,
        language: check.language,
        before: check.answer,
        before_source: check.source,
        after: answer.text,
        after_source: answer.source,
        changed: !sameAnswer(check.answer, answer.text) || check.source !== answer.source,
      });
    }
    if (lost() || runsStopped()) return { run, retry: false };

    // The scenarios are queued as any run is (the scenario worker plays them); GET /v1/knowledge/changes reads their
    // result when they are done. Within the workspace's bound of open runs: the ones beyond it are left out.
    const played: ScenarioResult[] = [];
    let room = MAX_OPEN_RUNS - (await deps.scenarios.openRuns(workspaceId));
    for (const scenario of scenarios) {
      if (room <= 0) break;
      const runId = randomUUID();
      const { id, name, definition, runs } = scenario;
      await deps.scenarios.insertRun({ id: runId, workspace_id: workspaceId, scenario_id: id, definition, runs }, RUNS_KEPT_PER_SCENARIO);
      played.push({ scenario_id: id, name, before: { run_id: scenario.run_id, runs, passed: scenario.passed }, after_run_id: runId });
      room--;
    }
    if (played.length > 0) deps.wakeScenarios();

    const recheckRow = { id: randomUUID(), workspace_id: workspaceId, started_at: startedAt, finished_at: now(), knowledge_version: version };
    await repository.insertRecheck({ ...recheckRow, checks: results, scenarios: played }, RECHECKS_KEPT);
    await repository.clearMark(workspaceId, upTo);
    Object.assign(run, { ran: true, checks: results.length, changed: results.filter((r) => r.changed).length, scenarios: played.length });
    return { run, retry: false };
  }

  const runs = claimedWorkspaceRuns<RecheckRun>({
    jobs: {
      ...repository,
      dueWorkspaces: (at) => repository.dueWorkspaces(at, quietMs, maxWaitMs),
      // The watermark in job_claims is not what decides here (the mark is): the latest write, for the record.
      latestChange: async (workspaceId) => {
        const mark = await repository.mark(workspaceId);
        return mark ? new Date(mark.last_at) : null;
      },
    },
    engine: deps.engine,
    leaseMs: deps.leaseMs,
    intervalMs: deps.intervalMs ?? RECHECK_POLL_MS,
    retryMs: deps.retryMs ?? RECHECK_RETRY_MS,
    // Every look reads the marks only, so there is no sweep of unchanged workspaces to space out.
    fullSweepMs: Number.MAX_SAFE_INTEGER,
    now,
    logger: log,
    what: 'running the saved checks again',
    work: recheck,
    onRun: (run) => {
      if (run.ran) log.info({ ...run }, 'saved checks run again after a knowledge change');
    },
  });
  const runsStopped = () => runs.stopped();

  return {
    /** Re-runs every workspace due now that no other engine holds, one after another; what each did. */
    runDue: runs.runDue,
    start: runs.start,
    wake: runs.wake,
    stop: runs.stop,
  };
}

export type KnowledgeRechecks = ReturnType<typeof createKnowledgeRechecks>;
