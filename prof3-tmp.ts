import { Session } from 'node:inspector/promises';
import { writeFileSync, readFileSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { migrate, openDatabase } from './db/database.ts';
import { webhooksRepository } from './db/repositories/webhooks.repository.ts';
import { GuardedClient } from './src/net/guarded-client.ts';
import { createSecretBox } from './src/secrets/secret-box.ts';
import { createLogger } from './src/log.ts';
import { recordEvent } from './src/webhooks/outbox.ts';
import { createDeliveryWorker } from './src/webhooks/delivery-worker.ts';
import { createWebhookService } from './src/webhooks/webhook-service.ts';
import { startIntegratorProcess } from './bench/lib/integrator-process.ts';
const N = Number(process.env.N ?? 8000);
const url = 'postgres://postgres@127.0.0.1:5432/test';
const schema = `dbg_${randomBytes(3).toString('hex')}`;
const admin = await openDatabase({ url, poolSize: 1 });
await sql`create schema ${sql.id(schema)}`.execute(admin.db);
const database = await openDatabase({ url, schema, poolSize: 16 });
await migrate(database.db, schema);
const db = database.db;
const integ = await startIntegratorProcess();
const http = new GuardedClient({ allow: ['127.0.0.1/32'], ca: readFileSync('test/fixtures/tls/ca.pem', 'utf8'), connectionsPerOrigin: 64 });
const secrets = createSecretBox(randomBytes(32));
const repository = webhooksRepository(db);
const service = createWebhookService({ db, repository, secrets, http, worker: { wake() {}, whenRecorded: async () => false } });
const ws: string[] = [];
for (let i = 0; i < 4; i++) { const id = randomUUID(); await db.insertInto('workspaces').values({ id, name: 'x', created_at: new Date() }).execute(); await service.put(id, 'new_chat', { url: `${integ.origin}/h${i}` }); ws.push(id); }
for (let s = 0; s < N; s += 200) await db.transaction().execute(async (trx) => { for (let n = s; n < s + 200; n++) await recordEvent(trx, ws[n % 4]!, { event: 'new_chat', conversation_id: 'conv-00000001', visitor_message: 'Hello, do you ship to Belgium and how long does it take?', page_url: 'https://shop.example/products/espresso', timestamp: new Date().toISOString(), dashboard_url: 'https://botlink.example/dashboard/conversations/conv-00000001' }); });
const stats: Record<string, { n: number; ms: number }> = {};
for (const k of ['claim', 'recordOutcomes', 'pendingEndpoints'] as const) { const f = repository[k] as (...a: unknown[]) => Promise<unknown>; (repository as Record<string, unknown>)[k] = async (...a: unknown[]) => { const t = performance.now(); try { return await f.apply(repository, a); } finally { const s = (stats[k] ??= { n: 0, ms: 0 }); s.n++; s.ms += performance.now() - t; } }; }
const worker = createDeliveryWorker({ repository, secrets, http, logger: createLogger('warn') });
const session = new Session(); session.connect();
if (process.env.PROF) { await session.post('Profiler.enable'); await session.post('Profiler.start'); }
const cpu0 = process.cpuUsage(); const t0 = performance.now();
worker.start(); await worker.runDue();
const el = performance.now() - t0; const cpu = process.cpuUsage(cpu0);
console.log('drained', N, (N / el * 1000).toFixed(0), '/s', ((cpu.user + cpu.system) / N).toFixed(0), 'us cpu each', JSON.stringify(stats));
if (process.env.PROF) { const { profile } = await session.post('Profiler.stop'); writeFileSync('/tmp/drain.cpuprofile', JSON.stringify(profile)); }
await worker.stop(1000); await http.close(); await integ.stop(); await database.close(); await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db); await admin.close();
