/**
 * The credentials every turn signs with (src/integration/integration-service.ts): cached for CREDENTIALS_CACHE_MS, read
 * once however many turns ask at the same moment, and read again ahead of the expiry while the cached ones serve.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { integrationsRepository } from '../../db/repositories/integrations.repository.ts';
import { createBotLinkClient } from '../../src/botlink/client.ts';
import { CREDENTIALS_CACHE_MS, createIntegrationService } from '../../src/integration/integration-service.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';
import { databaseKinds, openTestDatabase, type TestDatabase } from '../helpers/db.ts';

describe.each(databaseKinds)('integration credentials (%s)', (kind) => {
  let database: TestDatabase;
  let http: GuardedClient;
  const reads: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
  });
  afterAll(async () => {
    await http.close();
    await database.close();
  });
  afterEach(() => {
    vi.useRealTimers();
    reads.length = 0;
  });

  async function setup() {
    const workspaceId = randomUUID();
    await database.db.insertInto('workspaces').values({ id: workspaceId, name: 'Credentials', created_at: new Date() }).execute();
    const repository = integrationsRepository(database.db);
    // The real repository, with its reads counted.
    const integrations = { ...repository, find: (id: string) => (reads.push(id), repository.find(id)) };
    const service = createIntegrationService({ integrations, secrets: createSecretBox(randomBytes(32)), http, botlink: createBotLinkClient({ http }) });
    await service.put(workspaceId, { endpoint_url: 'https://127.0.0.1:9/botlink/channel' });
    reads.length = 0; // put reads the row itself
    return { workspaceId, repository, service };
  }

  it('turns asking at the same moment share one read', async () => {
    const { workspaceId, service } = await setup();
    const all = await Promise.all(Array.from({ length: 50 }, () => service.credentials(workspaceId)));
    expect(reads).toHaveLength(1);
    expect(new Set(all.map((c) => c?.endpointUrl))).toEqual(new Set(['https://127.0.0.1:9/botlink/channel']));
  });

  it('ahead of the expiry, the cached credentials answer and one read runs behind them; a change by another process is seen within the cache time', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { workspaceId, repository, service } = await setup();
    await service.credentials(workspaceId);
    expect(reads).toHaveLength(1);
    // Another process changes the URL.
    await repository.updateUrl(workspaceId, 'https://127.0.0.1:10/botlink/channel', new Date());
    vi.setSystemTime(Date.now() + CREDENTIALS_CACHE_MS / 2);
    expect((await service.credentials(workspaceId))?.endpointUrl).toBe('https://127.0.0.1:9/botlink/channel');
    expect(reads).toHaveLength(1);
    vi.setSystemTime(Date.now() + CREDENTIALS_CACHE_MS / 2 - 1_000);
    const during = await Promise.all(Array.from({ length: 20 }, () => service.credentials(workspaceId)));
    expect(during.every((c) => c?.endpointUrl === 'https://127.0.0.1:9/botlink/channel')).toBe(true);
    expect(reads).toHaveLength(2);
    await vi.waitFor(async () => expect((await service.credentials(workspaceId))?.endpointUrl).toBe('https://127.0.0.1:10/botlink/channel'));
    expect(reads).toHaveLength(2);
  });

  it('a change through this process is used at once', async () => {
    const { workspaceId, service } = await setup();
    await service.credentials(workspaceId);
    await service.put(workspaceId, { endpoint_url: 'https://127.0.0.1:11/botlink/channel' });
    expect((await service.credentials(workspaceId))?.endpointUrl).toBe('https://127.0.0.1:11/botlink/channel');
  });
});
