/**
 * The composition root's outbound clients (src/app/service.ts): the guarded HTTP client, the Bot Link and its tools,
 * the endpoints' health, the integration's settings (whose key signs every request to the endpoint), and the AI.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import { integrationsRepository } from '../../db/repositories/integrations.repository.ts';
import { createAi } from '../ai/index.ts';
import { createBotLinkClient } from '../botlink/client.ts';
import { createEndpointHealthTracker } from '../botlink/endpoint-health-tracker.ts';
import { createToolsClient } from '../botlink/tools-client.ts';
import { probeEndpoint, recordHealthTransition } from '../integration/endpoint-health-events.ts';
import { createIntegrationService } from '../integration/integration-service.ts';
import type { Metrics } from '../metrics.ts';
import { GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { ServiceOptions } from './options.ts';

export interface OutboundClientsInput {
  options: Pick<ServiceOptions, 'config' | 'logger' | 'lookup' | 'health'>;
  database: OpenedDatabase;
  secrets: SecretBox;
  metrics: Metrics;
}

export type OutboundClients = ReturnType<typeof createOutboundClients>;

export function createOutboundClients(input: OutboundClientsInput) {
  const { options, database, secrets, metrics } = input;
  const { config, logger } = options;
  const http = new GuardedClient({ allow: config.outboundAllow, ...(options.lookup ? { lookup: options.lookup } : {}) });
  const botlink = createBotLinkClient({ http, metrics });
  const tools = createToolsClient({ http });
  // The endpoints' health, shared through the database (src/botlink/endpoint-health.ts): a down endpoint is not waited
  // for; going down and recovering notify the owner (a notification, an optional webhook). The tracker and the
  // integration need each other (it probes with the integration's key; the integration's test button feeds it), so the
  // probe reads the integration built just below: probes run only once the tracker is started, after listen.
  const health = createEndpointHealthTracker({
    db: database.db,
    logger,
    metrics,
    onTransition: (trx, workspaceId, transition, endpoint) =>
      recordHealthTransition(trx, { workspaceId, transition, health: endpoint, publicUrl: config.publicUrl }),
    probe: (workspaceId, endpointUrl) => probeEndpoint({ botlink, health, credentials: (id) => integration.credentials(id) }, workspaceId, endpointUrl),
    ...options.health,
  });
  const integration = createIntegrationService({
    integrations: integrationsRepository(database.db),
    secrets,
    http,
    botlink,
    tools,
    health,
    // protocol §4.3: the manifest cache belongs to the endpoint and key it was fetched with.
    onChange: (workspaceId) => tools.invalidate(workspaceId),
  });
  // The conversations' AI (LLM_* settings; without them the embedded answerer).
  const ai = createAi(config.llm, { logger });
  return { http, botlink, tools, health, integration, ai };
}
