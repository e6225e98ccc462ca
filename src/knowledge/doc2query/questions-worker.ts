/**
 * Writes the AI's questions for passages in the background (docs/knowledge.md, "Questions written by the AI"): every
 * QUESTIONS_POLL_MS this engine looks for workspaces whose documents changed since their last run, claims one (one
 * engine at a time per workspace, ../../../db/repositories/knowledge-phrasings-jobs.repository.ts), and goes through
 * its passages whose questions are missing or out of date, QUESTION_REQUESTS_PER_ENGINE requests at a time. A sync
 * never waits for it: it reads what the sync committed, later.
 *
 * A passage's questions are replaced in one transaction, through the phrasings' own write side (../phrasings.ts), so
 * the chunk's tsv holds them; they are kept only while the passage is the one they were written from. When the model
 * is down or refuses, the workspace's run stops and waits QUESTIONS_RETRY_MS; an answer that is not a list of
 * questions is dropped, the other passages go on, and the run is tried again after the same wait. Stopping aborts the
 * requests in flight and gives the claim back.
 */
import { Counter, type Registry } from 'prom-client';
import type { KnowledgeRepository } from '../../../db/repositories/knowledge.repository.ts';
import type { KnowledgePhrasingsJobsRepository, PendingPassage } from '../../../db/repositories/knowledge-phrasings-jobs.repository.ts';
import { AiError } from '../../ai/ai-error.ts';
import type { Logger } from '../../log.ts';
import { claimedWorkspaceRuns } from '../claimed-runs.ts';
import { addPhrasings, removePhrasings, type PhrasingInput } from '../phrasings.ts';
import {
  MAX_QUESTION_LANGUAGES,
  QUESTION_REQUESTS_PER_ENGINE,
  QUESTIONS_BATCH,
  QUESTIONS_FULL_SWEEP_MS,
  QUESTIONS_POLL_MS,
  QUESTIONS_RETRY_MS,
} from './limits.ts';
import type { QuestionsModel } from './questions-model.ts';
import { MalformedQuestions, questionLanguages, writeQuestions, type QuestionBatch } from './write-questions.ts';

export interface QuestionsWorkerDeps {
  jobs: KnowledgePhrasingsJobsRepository;
  knowledge: Pick<KnowledgeRepository, 'inTransaction'>;
  /** The knowledge service's `writing`: the next search of this process looks at the knowledge again. */
  writing: <T>(workspaceId: string, work: () => Promise<T>) => Promise<T>;
  model: QuestionsModel;
  logger: Logger;
  /** Where the counters are registered (the service's /metrics). */
  registry: Registry;
  /** This engine's name on its claims, and a claim's length (renewed every third of it while a run goes on). */
  engine: string;
  leaseMs: number;
  /** How often due workspaces are looked for; default QUESTIONS_POLL_MS. 0: only when asked (`runDue`). */
  intervalMs?: number;
  /** How long a workspace waits after the model failed; default QUESTIONS_RETRY_MS. */
  retryMs?: number;
  now?: () => Date;
}

/** What one workspace's run did. */
export interface QuestionsRun {
  workspaceId: string;
  /** Passages given new questions, and the questions written. */
  passages: number;
  questions: number;
  /** Passages whose out-of-date questions were only removed (their current ones were there). */
  cleaned: number;
  /** Passages whose answer was not a list of questions (tried again later). */
  malformed: number;
  /** The model failed (down, refusing): the run stopped there. */
  failed: boolean;
}

export type QuestionsWorker = ReturnType<typeof createQuestionsWorker>;

/** The counters on /metrics: those already in the registry (another worker of the same service) are shared. */
function questionCounters(registry: Registry) {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> =>
    (registry.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
  return {
    generated: counter('botlink_knowledge_ai_questions_total', 'Questions the AI wrote for knowledge passages and this engine stored.'),
    failed: counter(
      'botlink_knowledge_ai_question_failures_total',
      "Requests for a passage's questions that failed, by reason (malformed: not a list of questions; else the model's failure).",
      ['reason'],
    ),
    tokens: counter('botlink_knowledge_ai_question_tokens_total', "Tokens the model used for passages' questions (prompt and completion), kept or not."),
  };
}

export function createQuestionsWorker(deps: QuestionsWorkerDeps) {
  const { jobs, knowledge, writing, model, logger, engine, leaseMs } = deps;
  const intervalMs = deps.intervalMs ?? QUESTIONS_POLL_MS;
  const retryMs = deps.retryMs ?? QUESTIONS_RETRY_MS;
  const now = deps.now ?? (() => new Date());
  const counters = questionCounters(deps.registry);

  /** Replaces the passage's generated questions with `batches`; false when the passage changed meanwhile. */
  async function store(workspaceId: string, passage: PendingPassage, batches: QuestionBatch[]): Promise<boolean> {
    const rows: PhrasingInput[] = batches.flatMap((batch) =>
      batch.questions.map((text, i) => ({
        chunkOrdinal: passage.ordinal,
        text,
        language: batch.language,
        origin: 'generated' as const,
        passageHash: passage.hash,
        // A request's tokens are shared among its questions (the first takes the rest), so their sum is its cost.
        tokens: batch.tokens === null ? null : Math.floor(batch.tokens / batch.questions.length) + (i === 0 ? batch.tokens % batch.questions.length : 0),
      })),
    );
    return writing(workspaceId, () =>
      knowledge.inTransaction(async (queries) => {
        // A chunk's id is new each time its document is written again: gone means the passage changed.
        if (!(await queries.phrasingTargetByChunk(workspaceId, passage.chunk_id))) return false;
        await removePhrasings(queries, workspaceId, passage.document_id, { origin: 'generated', chunkOrdinal: passage.ordinal });
        await addPhrasings(queries, workspaceId, passage.document_id, rows);
        return true;
      }),
    );
  }

  async function cleanUp(workspaceId: string, passage: PendingPassage): Promise<void> {
    const ids = passage.stale_ids;
    await writing(workspaceId, () => knowledge.inTransaction((queries) => removePhrasings(queries, workspaceId, passage.document_id, { ids })));
  }

  /** One passage: its questions written and stored, or its out-of-date ones removed. Throws what the model threw. */
  async function handle(run: QuestionsRun, languages: string[], passage: PendingPassage): Promise<void> {
    if (passage.current) {
      await cleanUp(run.workspaceId, passage);
      run.cleaned += 1;
      return;
    }
    let batches: QuestionBatch[];
    try {
      batches = await writeQuestions(model, passage, questionLanguages(passage.language, languages), {
        signal: runs.signal,
        onTokens: (n) => counters.tokens.inc(n),
      });
    } catch (err) {
      if (!(err instanceof MalformedQuestions)) throw err;
      counters.failed.inc({ reason: 'malformed' });
      run.malformed += 1;
      return;
    }
    if (await store(run.workspaceId, passage, batches)) {
      const written = batches.reduce((n, b) => n + b.questions.length, 0);
      counters.generated.inc(written);
      run.passages += 1;
      run.questions += written;
    }
  }

  /** A workspace's passages, a batch at a time, QUESTION_REQUESTS_PER_ENGINE at once; stops at the model's first failure. */
  async function writeWorkspace(workspaceId: string, lost: () => boolean): Promise<{ run: QuestionsRun; retry: boolean }> {
    const run: QuestionsRun = { workspaceId, passages: 0, questions: 0, cleaned: 0, malformed: 0, failed: false };
    const languages = await jobs.workspaceLanguages(workspaceId, MAX_QUESTION_LANGUAGES);
    let after: { documentId: string; ordinal: number } | null = null;
    for (;;) {
      const batch = await jobs.pendingPassages(workspaceId, after, QUESTIONS_BATCH);
      if (batch.length === 0) break;
      const last = batch.at(-1)!;
      after = { documentId: last.document_id, ordinal: last.ordinal };
      let next = 0;
      const lane = async () => {
        while (next < batch.length && !run.failed && !runs.stopped() && !lost()) {
          const passage = batch[next++]!;
          try {
            await handle(run, languages, passage);
          } catch (err) {
            if (runs.stopped()) return;
            if (!(err instanceof AiError)) throw err;
            counters.failed.inc({ reason: err.reason });
            logger.warn({ workspaceId, reason: err.reason, httpStatus: err.httpStatus, err: err.message }, "the model failed writing a passage's questions; the workspace waits and tries again");
            run.failed = true;
          }
        }
      };
      await Promise.all(Array.from({ length: QUESTION_REQUESTS_PER_ENGINE }, lane));
      if (run.failed || runs.stopped() || lost()) break;
    }
    return { run, retry: run.failed || run.malformed > 0 };
  }

  const runs = claimedWorkspaceRuns<QuestionsRun>({
    jobs,
    engine,
    leaseMs,
    intervalMs,
    retryMs,
    fullSweepMs: QUESTIONS_FULL_SWEEP_MS,
    now,
    logger,
    what: "writing the knowledge passages' questions",
    work: writeWorkspace,
    onRun: (run) => {
      if (run.passages + run.cleaned + run.malformed > 0 || run.failed) logger.info({ ...run }, "knowledge passages' questions written");
    },
  });

  return {
    /** Runs every workspace due now that no other engine holds, one after another; what each run did. */
    runDue: runs.runDue,
    /** Starts the periodic look (and one now). */
    start: runs.start,
    /** No new runs; the requests in flight are aborted and the claim given back before this resolves. */
    async stop(): Promise<void> {
      await runs.stop();
      await model.close().catch(() => {});
    },
  };
}
