/**
 * The composition root: opens the database (migrated under a lock), builds every service with its dependencies,
 * and serves HTTP. `main.ts` and the tests both start the service through here, so tests run the real wiring.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { migrate, openDatabase, type OpenedDatabase } from '../db/database.ts';
import { accountsRepository } from '../db/repositories/accounts.repository.ts';
import { integrationsRepository } from '../db/repositories/integrations.repository.ts';
// Knowledge base and content sync.
import { apiKeysRepository } from '../db/repositories/api-keys.repository.ts';
import { knowledgeRepository } from '../db/repositories/knowledge.repository.ts';
import { createApiKeysService } from './auth/api-keys.ts';
import { keyRoutes } from './http/routes/keys.ts';
import { syncRoutes } from './http/routes/sync.ts';
import { createKnowledgeService, type KnowledgeService } from './knowledge/knowledge-service.ts';
import { createAccountsService, type AccountsService } from './accounts/accounts-service.ts';
import { createBotLinkClient } from './botlink/client.ts';
import { createToolsClient } from './botlink/tools-client.ts';
import { createAi } from './ai/index.ts';
import { sessionsRepository } from '../db/repositories/sessions.repository.ts';
import { sessionRoutes } from './http/routes/sessions.ts';
import { createSessionRuntime, type SessionRuntime } from './sessions/session-runtime.ts';
import type { Config } from './config.ts';
import { acquireDataDirLock } from './data-dir-lock.ts';
import { createApp } from './http/app.ts';
import { buildOpenApi } from './http/openapi.ts';
import { accountRoutes } from './http/routes/accounts.ts';
import { integrationRoutes } from './http/routes/integration.ts';
import { operationRoutes } from './http/routes/operations.ts';
import type { RouteDefinition } from './http/route.ts';
import { createIntegrationService } from './integration/integration-service.ts';
import type { Logger } from './log.ts';
import { createMetrics } from './metrics.ts';
import { GuardedClient, type GuardedClientOptions } from './net/guarded-client.ts';
import { loadOrCreateMasterKey } from './secrets/master-key.ts';
import { createSecretBox } from './secrets/secret-box.ts';

export const VERSION = '0.1.0';

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  /** Tests: an already opened database (skips opening and the data-dir lock). */
  database?: OpenedDatabase;
  /** Tests: DNS for the guarded client. */
  lookup?: GuardedClientOptions['lookup'];
  /** How long SIGTERM waits for requests in flight; default 10 s. */
  drainMs?: number;
  /** Session runtime settings (tests use short ones). */
  sessions?: { idleMs?: number; instanceId?: string };
}

export interface RunningService {
  /** http://host:port actually bound. */
  url: string;
  server: Server;
  database: OpenedDatabase;
  accounts: AccountsService;
  /** The knowledge base: sync writes and `search` (KnowledgeSearch) for the AI. */
  knowledge: KnowledgeService;
  /** The live conversations: channels hand messages to it. */
  runtime: SessionRuntime;
  stop(): Promise<void>;
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger } = options;
  let state: 'starting' | 'ready' | 'draining' = 'starting';

  const releaseLock = options.database || config.databaseUrl ? () => {} : acquireDataDirLock(config.dataDir);
  const database = options.database ?? (await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }));
  try {
    if (!options.database) await migrate(database.db);
  } catch (err) {
    await database.close();
    releaseLock();
    throw err;
  }

  const { key: masterKey, created } = loadOrCreateMasterKey(config.masterKey, config.dataDir);
  if (created) logger.warn({ dataDir: config.dataDir }, 'generated a master key in DATA_DIR; back it up, stored secrets cannot be read without it');

  const metrics = createMetrics();
  const http = new GuardedClient({ allow: config.outboundAllow, ...(options.lookup ? { lookup: options.lookup } : {}) });
  const botlink = createBotLinkClient({ http, metrics });
  const tools = createToolsClient({ http });
  const accounts = createAccountsService({ accounts: accountsRepository(database.db) });
  const integration = createIntegrationService({
    integrations: integrationsRepository(database.db),
    secrets: createSecretBox(masterKey),
    http,
    botlink,
    tools,
    // spec §4.3: the manifest cache belongs to the endpoint and key it was fetched with.
    onChange: (workspaceId) => tools.invalidate(workspaceId),
  });
  // Knowledge base and content sync (spec §1.6).
  const knowledge = createKnowledgeService({ knowledge: knowledgeRepository(database.db) });
  const apiKeys = createApiKeysService({ apiKeys: apiKeysRepository(database.db) });

  // Conversations: one actor per session (machines/session.machine.ts).
  const ai = createAi(config.llm, { logger });
  const sessions = sessionsRepository(database.db);
  const runtime = createSessionRuntime({
    sessions,
    credentials: (workspaceId) => integration.credentials(workspaceId),
    botlink,
    knowledge,
    ai,
    tools,
    logger,
    ...(options.sessions?.idleMs ? { idleMs: options.sessions.idleMs } : {}),
    ...(options.sessions?.instanceId ? { instanceId: options.sessions.instanceId } : {}),
  });
  const sweep = setInterval(() => void runtime.passivateIdle().catch((err: unknown) => logger.error({ err }, 'passivation failed')), 30_000);
  sweep.unref();

  const routes: RouteDefinition[] = [];
  const openApiDocument = () => buildOpenApi(routes, { version: VERSION, serverUrl: config.publicUrl });
  routes.push(
    ...operationRoutes({
      metrics,
      openApi: openApiDocument,
      readiness: {
        async notReadyReason() {
          if (state !== 'ready') return state;
          try {
            await database.db.selectFrom('workspaces').select('id').limit(1).execute();
            return null;
          } catch {
            return 'database';
          }
        },
      },
    }),
    ...accountRoutes(accounts),
    ...integrationRoutes(integration),
    ...syncRoutes(knowledge),
    ...keyRoutes(apiKeys),
    ...sessionRoutes({ sessions, runtime }),
  );

  const app = createApp({ routes, accounts, metrics, logger, adminToken: config.adminToken, apiKeys });
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 15_000 }, app);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  state = 'ready';
  logger.info({ port: address.port, database: database.kind }, 'botlink is ready');

  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`,
    server,
    database,
    accounts,
    knowledge,
    runtime,
    stop() {
      stopping ??= (async () => {
        state = 'draining';
        logger.info('draining: no new work, waiting for requests in flight');
        server.close();
        server.closeIdleConnections();
        const drained = once(server, 'close').then(() => true);
        const timedOut = new Promise<false>((resolve) => setTimeout(resolve, options.drainMs ?? 10_000, false).unref());
        // Conversations finish their turn and are written before the connections they use go away.
        clearInterval(sweep);
        await runtime.stop(options.drainMs ?? 10_000);
        if (!(await Promise.race([drained, timedOut]))) server.closeAllConnections();
        await ai.close();
        await http.close();
        if (!options.database) await database.close();
        releaseLock();
        logger.info('stopped');
      })();
      return stopping;
    },
  };
}
