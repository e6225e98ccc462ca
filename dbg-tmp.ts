import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openDatabase } from './db/database.ts';
import { webhooksRepository } from './db/repositories/webhooks.repository.ts';
import { GuardedClient } from './src/net/guarded-client.ts';
import { createSecretBox } from './src/secrets/secret-box.ts';
import { recordEvent } from './src/webhooks/outbox.ts';
import { createWebhookService } from './src/webhooks/webhook-service.ts';
const url = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `dbg_${randomBytes(3).toString('hex')}`;
const admin = await openDatabase({ url, poolSize: 1 });
await sql`create schema ${sql.id(schema)}`.execute(admin.db);
const database = await openDatabase({ url, schema, poolSize: 4 });
await migrate(database.db, schema);
const db = database.db;
const http = new GuardedClient({ allow: ['127.0.0.1/32'] });
const service = createWebhookService({ db, repository: webhooksRepository(db), secrets: createSecretBox(randomBytes(32)), http, worker: { wake() {}, whenRecorded: async () => false } });
const ws: string[] = []; const eps: string[] = [];
for (let i = 0; i < 4; i++) { const id = randomUUID(); await db.insertInto('workspaces').values({ id, name: 'x', created_at: new Date() }).execute(); await service.put(id, 'new_chat', { url: `https://127.0.0.1:1/h${i}` }); ws.push(id); }
for (const e of await db.selectFrom('webhook_endpoints').select('id').execute()) eps.push(e.id);
for (let s = 0; s < 8000; s += 200) await db.transaction().execute(async (trx) => { for (let n = s; n < s + 200; n++) await recordEvent(trx, ws[n % 4]!, { event: 'new_chat', conversation_id: 'c', visitor_message: 'v', page_url: 'p', timestamp: 't', dashboard_url: 'd' }); });
await sql`analyze`.execute(db);
const ep = (await db.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', ws[0]!).executeTakeFirstOrThrow()).id;
const now = new Date(Date.now() + 1000);
const plan = await sql`explain (analyze, buffers) with picked as (
          select d.id from webhook_deliveries d join webhook_endpoints ep on ep.id = d.endpoint_id
          where d.endpoint_id = ${ep} and d.status = 'pending' and d.next_attempt_at <= ${now} and (d.lease_until is null or d.lease_until < ${now}) and (ep.disabled_at is null or d.kind = 'test')
          order by d.next_attempt_at limit 32 for update of d skip locked
        ), claimed as (update webhook_deliveries d set lease_owner = 'x', lease_until = ${new Date(Date.now() + 60000)} from picked where d.id = picked.id returning d.id, d.event_id, d.kind, d.attempt_count, d.event, d.endpoint_id)
        select claimed.*, ev.payload, ep.url from claimed join webhook_events ev on ev.id = claimed.event_id join webhook_endpoints ep on ep.id = claimed.endpoint_id`.execute(db);
console.log(plan.rows.map((r) => Object.values(r as object)[0]).join('\n'));
const t = performance.now(); for (let i = 0; i < 50; i++) await sql`select 1`.execute(db); console.log('select 1 rtt ms', (performance.now() - t) / 50);
await database.close(); await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db); await admin.close(); await http.close();
