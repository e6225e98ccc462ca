/**
 * The composition root's test scenarios (src/app/service.ts; docs/scenarios.md), in two stages. First the model clients
 * of the judge, the simulated customer and the starter suite (the service's LLM, each with a deadline and a
 * temperature of its own), and replay's judge, which the integration's routes use. Then, once the website chat exists,
 * their API, the worker that plays the runs on every engine (started after listen, stopped on drain before the
 * conversations it uses), and the saved checks run again after knowledge changes; the models close once the worker
 * stopped.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { analyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { knowledgeEmbeddingsRepository } from '../../db/repositories/knowledge-embeddings.repository.ts';
import { knowledgeChecksRepository } from '../../db/repositories/knowledge-checks.repository.ts';
import { scenariosRepository } from '../../db/repositories/scenarios.repository.ts';
import { channelRenderers } from '../channels/renderers.ts';
import { knowledgeCheckRoutes } from '../http/routes/knowledge-checks.ts';
import { TRY_QUESTION_RATE_LIMIT } from '../knowledge/limits.ts';
import { createKnowledgeAnswer } from '../knowledge/try-question.ts';
import { createRateLimiter } from '../rate-limiter.ts';
import { createKnowledgeChecks } from '../scenarios/knowledge-checks.ts';
import { createKnowledgeRechecks } from '../scenarios/knowledge-rechecks.ts';
import { detectLanguage } from '../text/detect-language.ts';
import { OpenAiAdapter } from '../ai/openai-adapter.ts';
import { unanswered } from '../analytics/overview.ts';
import { AppError } from '../errors.ts';
import { scenarioRoutes } from '../http/routes/scenarios.ts';
import { checkEndpointUrl } from '../integration/integration-service.ts';
import {
  JUDGE_TEMPERATURE,
  JUDGE_TIMEOUT_MS,
  PERSONA_DEADLINE_MS,
  PERSONA_TEMPERATURE,
  PERSONA_TIMEOUT_MS,
  STARTER_PASSAGES,
  STARTER_QUESTION_DAYS,
  STARTER_QUESTIONS,
  STARTER_TEMPERATURE,
  STARTER_TIMEOUT_MS,
} from '../scenarios/limits.ts';
import type { PassageLookup } from '../scenarios/judge.ts';
import { createReplayJudge } from '../scenarios/replay-judge.ts';
import { createScenarioRunner } from '../scenarios/scenario-runner.ts';
import { createScenarioWorker } from '../scenarios/scenario-worker.ts';
import { createScenariosService } from '../scenarios/scenarios-service.ts';
import type { Channels } from './channels.ts';
import type { OutboundClients } from './clients.ts';
import type { Conversations } from './conversations.ts';
import type { KnowledgeBase } from './knowledge.ts';
import type { ServiceOptions } from './options.ts';

export interface ScenarioModelsInput {
  options: Pick<ServiceOptions, 'config' | 'scenarios'>;
  database: OpenedDatabase;
}

export type ScenarioModels = ReturnType<typeof createScenarioModels>;

export function createScenarioModels(input: ScenarioModelsInput) {
  const { options, database } = input;
  const llm = options.config.llm;
  const chunks = knowledgeEmbeddingsRepository(database.db);
  // The service's model, each use with its own deadline and temperature (and connections, closed on stop).
  const model = (timeoutMs: number, temperature: number) =>
    llm ? new OpenAiAdapter({ baseUrl: llm.baseUrl, apiKey: llm.apiKey, model: llm.model, timeoutMs, temperature }) : null;
  const judgeModel = model(options.scenarios?.judgeTimeoutMs ?? JUDGE_TIMEOUT_MS, JUDGE_TEMPERATURE);
  const customerModel = model(options.scenarios?.personaTimeoutMs ?? PERSONA_TIMEOUT_MS, PERSONA_TEMPERATURE);
  const starterModel = model(options.scenarios?.starterTimeoutMs ?? STARTER_TIMEOUT_MS, STARTER_TEMPERATURE);
  // The knowledge a judge reads: the passages of the chunks a turn's search gave the bot, as far as they still exist.
  const passages: PassageLookup = async (workspaceId, chunkIds) =>
    (await chunks.hits(workspaceId, chunkIds)).map((hit) => ({ id: hit.id, title: hit.title, url: hit.url, text: hit.text }));
  return {
    judgeModel,
    customerModel,
    starterModel,
    passages,
    /** Replay's changed answers labelled better, worse or equal by the same model (docs/integrators.md, "Judged replay"). */
    replayJudge: judgeModel && createReplayJudge({ complete: (messages, signal) => judgeModel.complete(messages, signal), passages }),
    /** Closes the models' connections (once the worker that uses them stopped). */
    async close(): Promise<void> {
      await Promise.all([judgeModel?.close(), customerModel?.close(), starterModel?.close()]);
    },
  };
}

export interface TestScenariosInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'scenarios' | 'rateLimits' | 'knowledgeRechecks'>;
  database: OpenedDatabase;
  clients: Pick<OutboundClients, 'http' | 'integration' | 'ai'>;
  knowledge: Pick<KnowledgeBase, 'knowledge' | 'knowledgeRepo'>;
  conversations: Pick<Conversations, 'sessions' | 'runtimeCountingTurns' | 'engine'>;
  /** Runs play the website chat as a visitor does. */
  webchat: Channels['webchat'];
  models: ScenarioModels;
}

export type TestScenarios = ReturnType<typeof createTestScenarios>;

export function createTestScenarios(input: TestScenariosInput) {
  const { options, database, webchat, models } = input;
  const { config, logger } = options;
  const { http, integration, ai } = input.clients;
  const { knowledge, knowledgeRepo } = input.knowledge;
  const { sessions, runtimeCountingTurns, engine } = input.conversations;
  const { judgeModel, customerModel, starterModel, passages } = models;
  const repository = scenariosRepository(database.db);
  const analytics = analyticsRepository(database.db);
  const runner = createScenarioRunner({
    webchat,
    runtime: runtimeCountingTurns,
    sessions,
    // A candidate endpoint, as replay sends to one (docs/integrators.md, "Try a new version"): checked against the
    // outbound rules when the run starts, signed with the workspace's key.
    async candidate(workspaceId, url) {
      const endpointUrl = await checkEndpointUrl(http, url);
      const credentials = await integration.credentials(workspaceId);
      if (!credentials) throw new AppError('invalid_key', 'the workspace has no integration, so no key signs the requests; set one up first (PUT /v1/integration).');
      return { endpointUrl, key: credentials.key };
    },
    judge: judgeModel && ((messages, signal) => judgeModel.complete(messages, signal)),
    customer: customerModel && ((messages, signal) => customerModel.complete(messages, signal)),
    personaDeadlineMs: options.scenarios?.personaDeadlineMs ?? PERSONA_DEADLINE_MS,
    passages,
  });
  const worker = createScenarioWorker({
    repository,
    runner,
    logger,
    owner: `${engine}-scenarios`,
    leaseMs: config.leaseMs,
    ...(options.scenarios?.pollMs === undefined ? {} : { pollMs: options.scenarios.pollMs }),
    ...(options.scenarios?.concurrency === undefined ? {} : { concurrency: options.scenarios.concurrency }),
  });
  const service = createScenariosService({
    repository,
    model: config.llm !== null,
    checkUrl: (url) => checkEndpointUrl(http, url),
    wake: () => worker.wake(),
    starter: {
      complete: starterModel && ((messages, signal) => starterModel.complete(messages, signal)),
      // The Overview's unanswered questions (test conversations are never among them), most asked first.
      async questions(workspaceId) {
        const to = new Date();
        const from = new Date(to.getTime() - STARTER_QUESTION_DAYS * 86_400_000);
        const found = await unanswered(analytics, workspaceId, { from, to, channel: null }, sessions);
        return found.questions.slice(0, STARTER_QUESTIONS).map((q) => q.text);
      },
      passages: (workspaceId) => repository.starterPassages(workspaceId, STARTER_PASSAGES),
      names: (workspaceId) => repository.names(workspaceId),
    },
  });
  // Answers a knowledge change moved (docs/scenarios.md): the saved checks, and their re-run on every engine, one
  // engine per workspace, after a knowledge write's quiet spell.
  const checksRepository = knowledgeChecksRepository(database.db);
  const answer = createKnowledgeAnswer({
    search: (workspaceId, query, language, opts) => knowledge.search(workspaceId, query, language, opts),
    ai,
    render: (text, source, language) => channelRenderers.webchat({ text, source, language }),
    detectLanguage,
  });
  const knowledgeChecks = createKnowledgeChecks({
    repository: checksRepository,
    answer,
    limiter: createRateLimiter(TRY_QUESTION_RATE_LIMIT, options.rateLimits?.tryQuestion),
  });
  const rechecks = createKnowledgeRechecks({
    repository: checksRepository,
    scenarios: repository,
    version: (workspaceId) => knowledgeRepo.version(workspaceId),
    answer,
    wakeScenarios: () => worker.wake(),
    logger,
    engine: `${engine}-rechecks`,
    leaseMs: config.leaseMs,
    ...options.knowledgeRechecks,
  });
  return {
    routes: [...scenarioRoutes(service), ...knowledgeCheckRoutes(knowledgeChecks)],
    worker,
    rechecks,
    /** Re-runs stop; runs being played stop between turns and are given back; then the judge's connections close. */
    async stop(): Promise<void> {
      await rechecks.stop();
      await worker.stop();
      await models.close();
    },
  };
}
