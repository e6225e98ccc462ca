/**
 * Saved checks and the answers a knowledge change moved (docs/scenarios.md, "Answers a knowledge change moved"): a
 * question tried on the Knowledge screen is saved with the answer it gets now; after the knowledge changes, the
 * re-run (./knowledge-rechecks.ts) asks it again, and the latest re-run lists the answers that changed and the
 * web-chat scenarios played again. Accepting a changed answer makes it the expected one.
 */
import { randomUUID } from 'node:crypto';
import type { KnowledgeCheckRow, KnowledgeChecksRepository } from '../../db/repositories/knowledge-checks.repository.ts';
import { AppError, notFound } from '../errors.ts';
import { isUuid } from '../ids.ts';
import type { KnowledgeAnswer } from '../knowledge/try-question.ts';
import type { RateLimiter } from '../rate-limiter.ts';
import type { CheckResult, ScenarioResult } from './knowledge-rechecks.ts';
import { MAX_KNOWLEDGE_CHECKS } from './limits.ts';

/** An answer as the website chat shows it, and who gave it (knowledge_base, ai, fallback). */
interface Answer {
  text: string;
  source: string;
}

export interface KnowledgeCheckView {
  id: string;
  question: string;
  language: string;
  /** The expected answer, as the website chat shows it, and who gave it. */
  answer: { text: string; source: string };
  created_at: string;
  updated_at: string;
}

export interface KnowledgeChangesView {
  /** A knowledge write waits for its re-run (the quiet spell after the latest write, then the run). */
  pending: boolean;
  /** The latest re-run; null before the first. */
  change: {
    id: string;
    started_at: string;
    finished_at: string;
    /** Checks asked again, and how many got the same answer. */
    checks: number;
    same: number;
    /** The answers that changed; `accepted` once the check's expected answer is the new one. */
    changed: { check_id: string; question: string; language: string; before: Answer; after: Answer; accepted: boolean }[];
    /** Web-chat scenarios played again: their latest run before the change, and the run after it. */
    scenarios: {
      scenario_id: string;
      name: string;
      before: { run_id: string; runs: number; passed: number };
      /** status `gone`: the run is no longer kept (a scenario keeps its last runs only). */
      after: { run_id: string; status: 'running' | 'done' | 'gone'; runs: number | null; passed: number | null };
    }[];
  } | null;
}

export interface KnowledgeChecksDeps {
  repository: KnowledgeChecksRepository;
  answer: KnowledgeAnswer;
  /** Saving asks the question now (a model call with a model): the same budget size as "Try a question". */
  limiter: RateLimiter;
}

const iso = (value: Date | string) => new Date(value).toISOString();
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

function view(row: KnowledgeCheckRow): KnowledgeCheckView {
  const answer = { text: row.answer, source: row.source };
  return { id: row.id, question: row.question, language: row.language, answer, created_at: iso(row.created_at), updated_at: iso(row.updated_at) };
}

export function createKnowledgeChecks(deps: KnowledgeChecksDeps) {
  const { repository } = deps;
  const checkId = (id: string | undefined) => {
    if (!id || !isUuid(id)) throw notFound('The check');
    return id;
  };

  return {
    async list(workspaceId: string): Promise<KnowledgeCheckView[]> {
      return (await repository.listChecks(workspaceId, MAX_KNOWLEDGE_CHECKS)).map(view);
    },

    /** Asks the question now and keeps it with its answer as the expected one. */
    async create(workspaceId: string, input: { question: string; language?: string | undefined }): Promise<KnowledgeCheckView> {
      const question = input.question.trim();
      if ((await repository.countChecks(workspaceId)) >= MAX_KNOWLEDGE_CHECKS) {
        throw new AppError('unprocessable', `A workspace keeps at most ${MAX_KNOWLEDGE_CHECKS} saved checks; delete one first.`);
      }
      deps.limiter.takeOrRefuse(workspaceId, (seconds) => `This workspace asked more questions than the model may be asked at once; try again in ${seconds} s.`);
      const { language, answer } = await deps.answer(workspaceId, question, input.language);
      const row = await repository.insertCheck({ id: randomUUID(), workspace_id: workspaceId, question, language, answer: answer.text, source: answer.source });
      if (row === 'taken') {
        throw new AppError('conflict', 'This question is saved as a check already.', [{ field: 'question', message: 'saved already' }]);
      }
      return view(row);
    },

    async remove(workspaceId: string, id: string | undefined): Promise<void> {
      if (!(await repository.removeCheck(workspaceId, checkId(id)))) throw notFound('The check');
    },

    /** The latest re-run's answer to the check becomes the expected one. */
    async accept(workspaceId: string, id: string | undefined): Promise<KnowledgeCheckView> {
      const key = checkId(id);
      if (!(await repository.findCheck(workspaceId, key))) throw notFound('The check');
      const latest = await repository.latestRecheck(workspaceId);
      const result = latest ? json<CheckResult[]>(latest.checks).find((r) => r.check_id === key && r.changed) : undefined;
      if (!result) throw new AppError('conflict', "The latest re-run did not change this check's answer; there is nothing to accept.");
      const row = await repository.setAnswer(workspaceId, key, result.after, result.after_source);
      if (!row) throw notFound('The check');
      return view(row);
    },

    async changes(workspaceId: string): Promise<KnowledgeChangesView> {
      const [mark, latest] = await Promise.all([repository.mark(workspaceId), repository.latestRecheck(workspaceId)]);
      if (!latest) return { pending: mark !== undefined, change: null };
      const results = json<CheckResult[]>(latest.checks);
      const played = json<ScenarioResult[]>(latest.scenarios);
      const current = new Map((await repository.listChecks(workspaceId, MAX_KNOWLEDGE_CHECKS)).map((c) => [c.id, c]));
      const runs = new Map((await repository.runs(workspaceId, played.map((p) => p.after_run_id))).map((r) => [r.id, r]));
      return {
        pending: mark !== undefined,
        change: {
          id: latest.id,
          started_at: iso(latest.started_at),
          finished_at: iso(latest.finished_at),
          checks: results.length,
          same: results.filter((r) => !r.changed).length,
          // A check deleted since is left out.
          changed: results
            .filter((r) => r.changed && current.has(r.check_id))
            .map((r) => {
              const now = current.get(r.check_id)!;
              return {
                check_id: r.check_id,
                question: r.question,
                language: r.language,
                before: { text: r.before, source: r.before_source },
                after: { text: r.after, source: r.after_source },
                accepted: now.answer === r.after && now.source === r.after_source,
              };
            }),
          scenarios: played.map((p) => {
            const run = runs.get(p.after_run_id);
            return {
              scenario_id: p.scenario_id,
              name: p.name,
              before: p.before,
              after: run
                ? { run_id: run.id, status: run.status === 'done' ? ('done' as const) : ('running' as const), runs: run.runs, passed: run.status === 'done' ? run.passed : null }
                : { run_id: p.after_run_id, status: 'gone' as const, runs: null, passed: null },
            };
          }),
        },
      };
    },
  };
}

export type KnowledgeChecks = ReturnType<typeof createKnowledgeChecks>;
