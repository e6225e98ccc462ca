/**
 * DATABASE_POOL_SIZE (docs/operations.md, "Several processes on one PostgreSQL"): an engine keeps at most that many
 * connections to DATABASE_URL, and works with one: nothing it does holds a connection while it waits for a second
 * (which, with one, would wait forever). An engine on a database of its own with DATABASE_POOL_SIZE=1 syncs a page,
 * answers web chats in parallel, is asked for a person, taken over, answers as an agent, hands back, and lists its
 * conversations and figures; the database then has one connection from it, beside its LISTEN connections.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { createOwnDatabase, type OwnDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestServiceOn, type TestService } from '../helpers/service.ts';

const admin = process.env.TEST_DATABASE_URL;
const SHOP = 'https://shop.example';

for (const url of admin ? [admin] : []) {
  describe('an engine with DATABASE_POOL_SIZE=1', () => {
    let database: OwnDatabase;
    let service: TestService;

    beforeAll(async () => {
      database = await createOwnDatabase(url, 'pool');
      service = await startTestServiceOn({ DATABASE_URL: database.url, DATABASE_POOL_SIZE: '1' });
    }, 60_000);

    afterAll(async () => {
      await service?.stop();
      await database?.drop();
    });

    it('does everything a shop does with one connection, and never opens a second', async () => {
      const ws = await seedWorkspace(service);
      const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
      const syncKey = (await api('POST', '/v1/keys/sync', ws.owner)).body.key as string;
      const page = { title: 'Shipping', language: 'en', body: 'We ship every order within two working days. Shipping is free above 50 euro.' };
      expect((await service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: page })).status).toBe(201);
      expect((await api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
      const widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
      const widget = (method: string, path: string, body?: unknown, token?: string) =>
        service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });

      // Eight visitors at once: with a pool of ten they would have opened several connections.
      const chats = await Promise.all(
        Array.from({ length: 8 }, () => widget('POST', '/v1/webchat/conversations', { visitor_message: 'Is shipping free?', page_url: `${SHOP}/cart` })),
      );
      for (const chat of chats) expect([chat.status, chat.body.reply]).toEqual([201, expect.stringContaining('Shipping is free above 50 euro.')]);
      const { conversation_id: conversationId, visitor_token: visitorToken } = chats[0]!.body as { conversation_id: string; visitor_token: string };

      expect((await widget('POST', `/v1/webchat/conversations/${conversationId}/escalate`, { message: 'I want to talk to someone' }, visitorToken)).status).toBe(200);
      await service.runtime.settled();
      const waiting = (await api('GET', '/v1/inbox?view=waiting', ws.agent)).body.conversations as Array<{ id: string }>;
      expect(waiting).toHaveLength(1);
      const sessionId = waiting[0]!.id;
      expect((await api('POST', `/v1/sessions/${sessionId}/takeover`, ws.agent)).status).toBe(200);
      const poll = widget('GET', `/v1/webchat/conversations/${conversationId}/messages?wait=10`, undefined, visitorToken);
      const sent = await api('POST', `/v1/sessions/${sessionId}/messages`, ws.agent, { text: 'Hi, it leaves today.' });
      expect(sent.status).toBe(201);
      expect(((await poll).body.messages as Array<{ text: string }>).map((m) => m.text)).toContain('Hi, it leaves today.');
      expect((await api('POST', `/v1/sessions/${sessionId}/handback`, ws.agent)).status).toBe(200);
      expect((await widget('POST', `/v1/webchat/conversations/${conversationId}/messages`, { message: 'Is shipping free?' }, visitorToken)).body.reply).toContain('Shipping is free above 50 euro.');

      const [sessions, overview] = await Promise.all([
        api('GET', '/v1/sessions?channel=webchat', ws.agent),
        api('GET', `/v1/analytics/overview?from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`, ws.owner),
      ]);
      expect(sessions.body.sessions).toHaveLength(8);
      expect([overview.status, typeof overview.body.conversations]).toEqual([200, 'number']);

      // Its connections: the pool's (at most one) and those that only LISTEN.
      const watcher = await openDatabase({ url, poolSize: 1 });
      try {
        const { rows } = await sql<{ query: string }>`
          select query from pg_stat_activity where datname = ${database.name} and backend_type = 'client backend' and pid <> pg_backend_pid()`.execute(watcher.db);
        const pooled = rows.filter((r) => !/^\s*listen /i.test(r.query));
        expect(pooled).toHaveLength(1);
      } finally {
        await watcher.close();
      }
    }, 60_000);
  });
}
