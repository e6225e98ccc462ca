/**
 * An operator who puts a transaction pooler in front without saying so (docs/operations.md, "Several processes on one
 * PostgreSQL"): named statements collide on the pooler's shared server connections ("prepared statement … already
 * exists", 42P05, or "does not exist", 26000). The engine says once, at error level, which setting is missing. Needs
 * the real PostgreSQL (TEST_DATABASE_URL) and Debian's pgbouncer.
 */
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../db/database.ts';
import { prepared } from '../../db/prepared.ts';
import { startPgbouncer, type Pgbouncer } from '../../harness/pgbouncer.ts';
import { createLogger } from '../../src/log.ts';
import { createOwnDatabase, type OwnDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestServiceOn, type TestService } from '../helpers/service.ts';

const admin = process.env.TEST_DATABASE_URL;
const SHOP = 'https://shop.example';
const HINT = 'this looks like a transaction pooler: set DATABASE_POOLER=transaction';

for (const url of admin ? [admin] : []) {
  describe('a transaction pooler without DATABASE_POOLER=transaction', () => {
    let bouncer: Pgbouncer;
    let database: OwnDatabase;

    beforeAll(async () => {
      const upstream = new URL(url);
      // One server connection: every pool client's named statement lands on it.
      bouncer = await startPgbouncer({ host: upstream.hostname, port: Number(upstream.port || 5432), user: decodeURIComponent(upstream.username || 'postgres') }, { poolSize: 1 });
      database = await createOwnDatabase(url, 'poolersign');
      const direct = await openDatabase({ url: database.url, poolSize: 1 });
      await migrate(direct.db);
      await direct.close();
    }, 60_000);

    afterAll(async () => {
      await bouncer?.stop();
      await database?.drop();
    });

    it('the database tells once that the server answered a named statement as only a pooler explains', async () => {
      const signs: string[] = [];
      const opened = await openDatabase({ url: bouncer.url(database.name), poolSize: 4, onTransactionPoolerSign: (code) => signs.push(code) });
      try {
        const probe = () => sql`${prepared('pooler_sign_probe')} select pg_sleep(0.01), 1 as one`.execute(opened.db);
        const results = await Promise.allSettled(Array.from({ length: 12 }, probe));
        const failed = results.filter((r) => r.status === 'rejected').map((r) => (r.reason as { code?: string }).code);
        expect(failed.length).toBeGreaterThan(0);
        expect(failed.every((code) => code === '42P05' || code === '26000')).toBe(true);
        expect(signs).toHaveLength(1);
        expect(['42P05', '26000']).toContain(signs[0]);
      } finally {
        await opened.close();
      }
    });

    it('the same queries with DATABASE_POOLER=transaction all succeed and say nothing', async () => {
      const signs: string[] = [];
      const opened = await openDatabase({ url: bouncer.url(database.name), poolSize: 4, pooler: 'transaction', onTransactionPoolerSign: (code) => signs.push(code) });
      try {
        const probe = () => sql`${prepared('pooler_sign_probe')} select pg_sleep(0.01), 1 as one`.execute(opened.db);
        const results = await Promise.allSettled(Array.from({ length: 12 }, probe));
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
        expect(signs).toEqual([]);
      } finally {
        await opened.close();
      }
    });

    describe('the engine', () => {
      let service: TestService;
      const lines: { level: number; msg: string; code?: string }[] = [];

      beforeAll(async () => {
        const sink = new Writable({
          write(chunk: Buffer, _enc, done) {
            for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
            done();
          },
        });
        service = await startTestServiceOn({ DATABASE_URL: bouncer.url(database.name) }, { logger: createLogger('error', sink) });
      }, 60_000);

      afterAll(async () => {
        await service?.stop();
      });

      it('logs once, at error level, which setting to set, while web chats fail and succeed side by side', async () => {
        const ws = await seedWorkspace(service, 'Unsaid');
        expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
        const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
        for (let round = 0; round < 3 && !lines.some((l) => l.msg.startsWith(HINT)); round++) {
          await Promise.all(
            Array.from({ length: 8 }, (_, i) =>
              service.api('POST', '/v1/webchat/conversations', {
                headers: { 'x-widget-key': widgetKey, origin: SHOP },
                body: { visitor_message: `Is shipping free? (${round}.${i})`, page_url: `${SHOP}/cart` },
              }),
            ),
          );
        }
        const hints = lines.filter((l) => l.msg.startsWith(HINT));
        expect(hints).toHaveLength(1);
        expect(hints[0]).toMatchObject({ level: 50, msg: expect.stringContaining('docs/operations.md') });
        expect(['42P05', '26000']).toContain(hints[0]!.code);
      });
    });
  });
}
