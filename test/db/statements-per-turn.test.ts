/**
 * The statements one turn sends to PostgreSQL, and their plans (docs/operations.md, "Beyond one PostgreSQL"): a web
 * chat message and a WhatsApp message of a conversation already under way, through the whole service, with every
 * background poll slowed so that only the turn's own statements are counted. Each distinct statement is explained
 * (EXPLAIN, not run again) on a database with 20,000 other sessions, and the report says which tables it touches,
 * whether it names its workspace (so a database distributed by workspace_id could send it to one shard), and the plan's
 * top nodes. The counts are asserted against ceilings: a change that adds statements to a turn shows here.
 *
 * Needs the real PostgreSQL (TEST_DATABASE_URL).
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.ts';
import { fixture, metaSignature, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { ACCESS_TOKEN, APP_SECRET, PHONE_NUMBER_ID } from '../channels/whatsapp/fixtures/harness.ts';
import { openTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../webhooks/receiver.ts';

const admin = process.env.TEST_DATABASE_URL;
const HOUR = 3_600_000;
const SHOP = 'https://shop.example';

interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/** The tables a statement reads or writes, in order of first mention. */
function tablesOf(text: string): string[] {
  const names = [...text.matchAll(/\b(?:from|join|into|update)\s+"?([a-z_]+)"?/gi)].map((m) => m[1]!.toLowerCase());
  return [...new Set(names.filter((n) => !['v', 'locked', 'picked', 'claimed', 'released', 'jsonb_to_recordset', 'generate_series', 'decided', 'turn', 'message', 'lateral', 'unnest'].includes(n)))];
}

/** The first words of a statement, for the report. */
function shape(text: string): string {
  return text.replace(/\/\*.*?\*\//g, '').replace(/\s+/g, ' ').trim().slice(0, 90);
}

if (admin) {
  describe('statements per turn on PostgreSQL, and their plans', () => {
    let database: TestDatabase;
    let logged: Kysely<Database>;
    let service: TestService;
    let graph: TestHttpsServer;
    let recording: Statement[] | null = null;

    beforeAll(async () => {
      database = await openTestDatabase('postgres');
      // The same database through a pool of our own whose every statement is recorded while `recording` is set.
      const pool = new pg.Pool({ connectionString: database.url, max: 4 });
      logged = new Kysely<Database>({
        dialect: new PostgresDialect({ pool }),
        log: (event: LogEvent) => {
          if (event.level === 'query') recording?.push({ sql: event.query.sql, parameters: event.query.parameters });
        },
      });
      graph = await startHttpsServer((_req, res, body) => {
        const to = (JSON.parse(body.toString()) as { to: string }).to;
        sendJson(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id: `wamid.OUT${randomBytes(6).toString('hex')}` }] });
      });
      service = await startTestService(
        { db: logged, kind: 'postgres', close: async () => {} },
        { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: 'statements', WHATSAPP_GRAPH_URL: `${graph.origin}/v21.0` },
        // Only the turn's own statements: every poll and sweep waits an hour (the work is woken in-process).
        { webhooks: { pollIntervalMs: HOUR }, live: { pollMs: HOUR, watchesRefreshMs: HOUR }, whatsapp: { worker: { pollMs: HOUR } } },
      );
      // Other conversations, so that the plans are those of a table with rows.
      const other = (await sql<{ id: string }>`insert into workspaces (id, name) values (gen_random_uuid(), 'others') returning id`.execute(logged)).rows[0]!.id;
      await sql`insert into sessions (id, workspace_id, channel, external_id, machine_version)
        select gen_random_uuid(), ${other}, 'whatsapp', 'wa' || g, 1 from generate_series(1, 20000) g`.execute(logged);
      // This schema's tables only: a bare ANALYZE would analyze (and re-plan) every other test file's tables too.
      const tables = (await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`.execute(logged)).rows;
      for (const { name } of tables) await sql`analyze ${sql.id(name)}`.execute(logged);
    }, 60_000);

    afterAll(async () => {
      await service?.stop();
      await graph?.close();
      await logged?.destroy();
      await database?.close();
    });

    async function explain(statements: Statement[]) {
      const rows: { statement: string; count: number; tables: string[]; workspace: boolean; plan: string }[] = [];
      const distinct = new Map<string, Statement[]>();
      for (const s of statements) distinct.set(s.sql, [...(distinct.get(s.sql) ?? []), s]);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        for (const [text, runs] of distinct) {
          let plan = '(not explainable)';
          if (/^\s*(\/\*.*?\*\/\s*)?(select|insert|update|delete|with)\b/i.test(text)) {
            const result = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (format json) ${text}`, runs[0]!.parameters as unknown[]);
            plan = describePlan(result.rows[0]!['QUERY PLAN'][0]!.Plan);
          }
          rows.push({ statement: shape(text), count: runs.length, tables: tablesOf(text), workspace: /workspace_id/.test(text), plan });
        }
      } finally {
        await client.end();
      }
      return rows;
    }

    it('a web chat message and a WhatsApp message: the statements of each turn, counted and explained', async () => {
      const ws = await seedWorkspace(service, 'Statements');
      const syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
      await service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: { title: 'Shipping', language: 'en', body: 'We ship every order within two working days. Shipping is free above 50 euro.' } });
      await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
      await service.api('PUT', '/v1/whatsapp', { token: ws.owner, body: { phone_number_id: PHONE_NUMBER_ID, access_token: ACCESS_TOKEN } });
      const widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
      const headers = { 'x-widget-key': widgetKey, origin: SHOP };
      const started = await service.api('POST', '/v1/webchat/conversations', { headers, body: { visitor_message: 'Hello', page_url: `${SHOP}/` } });
      const conversationId = started.body.conversation_id as string;
      const visitor = { ...headers, 'x-visitor-token': started.body.visitor_token as string };
      await service.runtime.settled();

      // Web chat: one message of a conversation under way (caches warm, as in steady state).
      await service.api('POST', `/v1/webchat/conversations/${conversationId}/messages`, { headers: visitor, body: { message: 'Is shipping free?' } });
      await service.runtime.settled();
      recording = [];
      const answered = await service.api('POST', `/v1/webchat/conversations/${conversationId}/messages`, { headers: visitor, body: { message: 'Do you ship on Saturday?' } });
      expect(answered.status).toBe(200);
      await service.runtime.settled();
      const webchat = recording;
      recording = null;

      // WhatsApp: the customer's second message, from the webhook's 200 to the reply accepted by the Graph API.
      const say = async (text: string) => {
        const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: '31611110000', MESSAGE_ID: `wamid.IN${randomBytes(8).toString('hex')}`, TIMESTAMP: unixSeconds(new Date()), BODY: text });
        const res = await fetch(`${service.url}/v1/whatsapp/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': metaSignature(APP_SECRET, body) }, body });
        expect(res.status).toBe(200);
        const before = graph.requests.length;
        await until(() => graph.requests.length > before, 15_000, 'the WhatsApp reply');
        await service.whatsapp.worker.idle();
        await service.runtime.settled();
      };
      await say('Is shipping free?');
      recording = [];
      await say('Do you ship on Saturday?');
      const whatsapp = recording;
      recording = null;

      const report = { webchat: await explain(webchat), whatsapp: await explain(whatsapp) };
      console.info(`[statements] web chat turn: ${webchat.length} statements; WhatsApp message: ${whatsapp.length}`);
      for (const [turn, rows] of Object.entries(report)) {
        for (const r of rows) console.info(`[statements] ${turn} | ${r.count} | ${r.tables.join(', ')} | ${r.workspace ? 'workspace' : '-'} | ${r.plan} | ${r.statement}`);
      }
      // Ceilings with room: the figures in docs/operations.md are what this run printed.
      expect(webchat.length).toBeGreaterThan(0);
      expect(webchat.length).toBeLessThanOrEqual(20);
      expect(whatsapp.length).toBeLessThanOrEqual(30);
    }, 60_000);
  });
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** The plan's scans, in order: `Index Scan sessions_pkey`, `Seq Scan knowledge_chunks`, … */
function describePlan(plan: PlanNode): string {
  const scans: string[] = [];
  const walk = (node: PlanNode) => {
    if (node['Relation Name'] || node['Index Name']) scans.push(`${node['Node Type']} ${node['Index Name'] ?? node['Relation Name']}`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return scans.length > 0 ? scans.join(' + ') : plan['Node Type'];
}
