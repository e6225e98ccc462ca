/**
 * Scenarios play through the real engine on each channel (docs/scenarios.md, "How a run plays"): the web chat's turn,
 * WhatsApp's turn up to the Graph API (nothing sent), with the integrator's real endpoint or a candidate, the knowledge
 * base and the handoff rule; and their test conversations never reach the team: lists, the inbox, notifications,
 * assignment, the Overview, exports, webhooks and retention leave them out (docs/scenarios.md, "Test conversations").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamPresenceRepository } from '../../db/repositories/team-presence.repository.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { APP_SECRET, MASTER_KEY, VERIFY_TOKEN, startHarness, until, type Harness } from '../channels/whatsapp/fixtures/harness.ts';
import { play, runScenario, saveScenario } from './helpers.ts';

const SHOP = 'https://shop.example';
const SHIPPING = 'We ship every order within two working days.';
/** How long the slow candidate endpoint takes to answer. */
const SLOW_MS = 1_200;

describeEachDatabase('scenarios through the real engine', (get) => {
  let h: Harness;
  let slow: TestHttpsServer;
  let owner: string;
  /** Every test conversation's session, from the transcripts. */
  const testSessions: string[] = [];

  /** Plays a scenario and keeps its test conversations' sessions. */
  async function played(definition: object, body: { runs?: number } = {}) {
    const run = await play(h.service, owner, definition, body);
    for (const t of run.transcripts as { session_id: string | null }[]) if (t.session_id) testSessions.push(t.session_id);
    return run;
  }
  const channelRequests = (message: string) => h.channelRequests().filter((r) => r.message === message);

  beforeAll(async () => {
    h = await startHarness(get());
    owner = h.workspace.owner;
    const syncKey = (await h.service.api('POST', '/v1/keys/sync', { token: owner })).body.key as string;
    const page = await h.service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: { title: 'Shipping', language: 'en', body: `${SHIPPING} Shipping is free above 50 euro.` } });
    if (page.status !== 201) throw new Error(`seeding the page failed: ${page.text}`);
    // A candidate endpoint that answers slowly, and says so.
    slow = await startHttpsServer(async (_req, res, body) => {
      await sleep(SLOW_MS);
      sendJson(res, 200, { reply: `Slowly: ${(JSON.parse(body.toString()) as { message: string }).message}` });
    });
  });
  afterAll(async () => {
    await h.close();
    await slow.close();
  });

  describe('web chat: the web chat\'s own turn (knowledge base, never the Bot Link)', () => {
    it('a scenario that passes', async () => {
      const run = await played({
        name: 'Web chat: shipping',
        channel: 'webchat',
        turns: [{ customer: 'How fast do you ship my order?', expect: { contains: ['two working days'], source: 'knowledge_base', handoff: false } }],
      });
      expect(run).toMatchObject({ status: 'done', runs: 1, passed: 1, pass_rate: 1, failures: [] });
      expect(run.transcripts[0].turns[0]).toMatchObject({ customer: 'How fast do you ship my order?', reply: expect.stringContaining(SHIPPING), source: 'knowledge_base', passed: true });
      expect(h.channelRequests().filter((r) => r.channel === 'webchat')).toEqual([]);
    });

    it("the scenario's customer email and name are on the test conversation from its start", async () => {
      const run = await played({ name: 'Web chat: known customer', channel: 'webchat', customer: { email: 'sam@example.com', name: 'Sam' }, turns: [{ customer: 'How fast do you ship my order?' }] });
      expect(run.transcripts[0].customer).toEqual({ phone: null, email: 'sam@example.com', name: 'Sam' });
      const session = await h.service.api('GET', `/v1/sessions/${run.transcripts[0].session_id}`, { token: owner });
      expect(session.body.customer).toMatchObject({ email: 'sam@example.com', name: 'Sam' });
    });

    it('a scenario that fails says which expectation and what came back, on each of its runs', async () => {
      const run = await played(
        {
          name: 'Web chat: wrong promise',
          channel: 'webchat',
          turns: [{ customer: 'How fast do you ship my order?', expect: { contains: ['next day delivery'], source: 'integrator' } }],
        },
        { runs: 2 },
      );
      expect(run).toMatchObject({ status: 'done', runs: 2, passed: 0, pass_rate: 0 });
      expect(run.failures).toEqual([
        { run: 1, turn: 1, expectation: 'contains "next day delivery"', got: expect.stringContaining(SHIPPING) },
        { run: 1, turn: 1, expectation: 'source integrator', got: 'knowledge_base' },
        { run: 2, turn: 1, expectation: 'contains "next day delivery"', got: expect.stringContaining(SHIPPING) },
        { run: 2, turn: 1, expectation: 'source integrator', got: 'knowledge_base' },
      ]);
      // Each run is a conversation of its own.
      expect(new Set(run.transcripts.map((t: { session_id: string }) => t.session_id)).size).toBe(2);
    });

    it('a handoff expectation: asking for a person hands over, and the next message waits for the team', async () => {
      const run = await played({
        name: 'Web chat: a person',
        channel: 'webchat',
        turns: [
          { customer: 'Can I speak to a real person please?', expect: { handoff: 'human' } },
          { customer: 'Hello? Anyone there?', expect: { handoff: false } },
        ],
      });
      expect(run).toMatchObject({ passed: 1, failures: [] });
      expect(run.transcripts[0].turns[0].handoff).toEqual({ kind: 'human', connected: false });
      expect(run.transcripts[0].turns[1]).toMatchObject({ reply: null, source: null });
    });
  });

  describe('WhatsApp: the worker\'s turn, the reply kept instead of sent', () => {
    it('a scenario that passes asks the live endpoint with the test customer\'s number; Meta gets nothing', async () => {
      const run = await played({
        name: 'WhatsApp: order',
        channel: 'whatsapp',
        customer: { phone: '+31 6 1111 2222' },
        turns: [{ customer: 'Where is my order 1001?', expect: { contains: ['answer to: where is my order 1001'], source: 'integrator', max_ms: 10_000 } }],
      });
      expect(run).toMatchObject({ passed: 1, failures: [] });
      expect(channelRequests('Where is my order 1001?')).toEqual([expect.objectContaining({ channel: 'whatsapp', customer: { phone: '+31611112222' } })]);
      expect(h.sends()).toEqual([]);
    });

    it('a scenario that fails', async () => {
      const run = await played({
        name: 'WhatsApp: no echo',
        channel: 'whatsapp',
        turns: [{ customer: 'Do you sell tents?', expect: { not_contains: ['Answer to'], matches: '^Tents' } }],
      });
      expect(run).toMatchObject({ passed: 0, pass_rate: 0 });
      expect(run.failures).toEqual([
        { run: 1, turn: 1, expectation: 'not_contains "Answer to"', got: '"Answer to: Do you sell tents?"' },
        { run: 1, turn: 1, expectation: 'matches /^Tents/', got: '"Answer to: Do you sell tents?"' },
      ]);
      expect(h.sends()).toEqual([]);
    });

    it("a handoff expectation: the integrator's forward", async () => {
      const run = await played({ name: 'WhatsApp: forward', channel: 'whatsapp', turns: [{ customer: 'Refund please, please pass this on', expect: { handoff: 'forward', contains: ['passed this on'] } }] });
      expect(run).toMatchObject({ passed: 1, failures: [] });
    });

    it("the integrator's customer.email and customer.name are saved on the test conversation, over the scenario's", async () => {
      const knows = await startHttpsServer(async (_req, res) => sendJson(res, 200, { reply: 'Hello Noor.', customer: { email: 'noor@example.com', name: 'Noor' } }));
      try {
        const run = await played({
          name: 'WhatsApp: customer details',
          channel: 'whatsapp',
          customer: { phone: '+31 6 3333 4444', email: 'old@example.com', name: 'Old name' },
          integrator: { url: `${knows.origin}/botlink/channel` },
          turns: [{ customer: 'Hi, it is Noor', expect: { source: 'integrator' } }],
        });
        expect(run).toMatchObject({ passed: 1 });
        expect(run.transcripts[0].customer).toEqual({ phone: '+31633334444', email: 'noor@example.com', name: 'Noor' });
      } finally {
        await knows.close();
      }
    });

    it('integrator "none" never asks the endpoint', async () => {
      const run = await played({ name: 'WhatsApp: no integrator', channel: 'whatsapp', integrator: 'none', turns: [{ customer: 'Anything about bicycles?', expect: { source: 'fallback' } }] });
      expect(run).toMatchObject({ passed: 1 });
      expect(channelRequests('Anything about bicycles?')).toEqual([]);
    });

    it('a latency ceiling against a slow candidate endpoint: above it fails with the time taken, a higher one passes', async () => {
      const slowScenario = (name: string, maxMs: number) => ({
        name,
        channel: 'whatsapp',
        integrator: { url: `${slow.origin}/botlink/channel` },
        turns: [{ customer: `Slow question for ${name}`, expect: { contains: ['Slowly'], max_ms: maxMs } }],
      });
      const tooSlow = await played(slowScenario('Slow: tight', 300));
      expect(tooSlow.passed).toBe(0);
      expect(tooSlow.failures).toEqual([{ run: 1, turn: 1, expectation: 'max_ms 300', got: expect.stringMatching(/^\d+ ms$/) }]);
      expect(Number(tooSlow.failures[0].got.split(' ')[0])).toBeGreaterThanOrEqual(SLOW_MS);
      const roomy = await played(slowScenario('Slow: roomy', 20_000));
      expect(roomy).toMatchObject({ passed: 1, failures: [] });
      // The candidate was asked, signed with the workspace's key; the live endpoint was not.
      expect(slow.requests.filter((r) => r.method === 'POST').every((r) => typeof r.headers['x-service-signature'] === 'string')).toBe(true);
      expect(slow.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
      expect(channelRequests('Slow question for Slow: tight')).toEqual([]);
    });
  });

  describe('test conversations never reach the team', () => {
    it('not the sessions list, the inbox, notifications, assignment, the Overview, exports or webhooks', async () => {
      const { db } = get();
      const { workspaceId, agent } = h.workspace;
      expect(testSessions.length).toBeGreaterThanOrEqual(9);
      // They are there, marked with their run, and one waits for a person (the handoff scenario).
      const marked = await db.selectFrom('sessions').select(['id', 'handled_by', 'assigned_user_id']).where('test_run_id', 'is not', null).execute();
      expect(marked.map((s) => s.id).sort()).toEqual([...testSessions].sort());
      expect(marked.some((s) => s.handled_by === 'waiting')).toBe(true);
      // An agent is available: a waiting customer's conversation would be assigned to them; a test's is not.
      expect((await h.service.api('PUT', '/v1/me/presence', { token: agent, body: { status: 'available' } })).status).toBe(200);
      const presence = teamPresenceRepository(db);
      const assign = () => presence.assignWaiting(workspaceId, { idleMinutes: 5, maxPerAgent: 10, limit: 10 });
      expect(await presence.workspacesWithUnassigned(100)).not.toContain(workspaceId);
      expect(await assign()).toEqual([]);
      expect(await assignedCount(h)).toBe(0);

      const seen = await teamView(h.service, owner);
      expect(seen).toEqual({ sessions: [], waiting: [], open: [], notifications: [], conversations: 0, customerMessages: 0, unanswered: [], exported: '', webhookEvents: 0 });

      // The same views do show a customer's conversation: a visitor who asks for a person.
      const origins = await h.service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: [SHOP] } });
      expect(origins.status).toBe(200);
      const widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: owner })).body.key as string;
      const chat = await h.service.api('POST', '/v1/webchat/conversations', {
        headers: { 'x-widget-key': widgetKey, origin: SHOP },
        body: { visitor_message: 'Can I speak to a real person please?', page_url: `${SHOP}/tents` },
      });
      expect(chat.status).toBe(201);
      const customer = await until(async () => {
        const view = await teamView(h.service, owner);
        // The turn is written just after its reply: the figures follow it.
        return view.waiting.length === 1 && view.notifications.length === 1 && view.webhookEvents === 2 && view.customerMessages === 1 ? view : undefined;
      });
      expect(customer).toMatchObject({ conversations: 1, customerMessages: 1, unanswered: [] });
      expect(customer.sessions).toHaveLength(1);
      expect(customer.exported).toContain('Can I speak to a real person please?');
      // Assigned by the service as it started waiting, or now.
      await assign();
      expect(await assignedCount(h)).toBe(1);
    });

    it("not the workspace's retention: its purge neither deletes nor counts them", async () => {
      const { db } = get();
      const { workspaceId } = h.workspace;
      expect((await h.service.api('PUT', '/v1/workspace/retention', { token: owner, body: { days: 1 } })).status).toBe(200);
      // Everything of the workspace three days old: the customer's conversation is past the period, and so are the tests'.
      await sql`update sessions set updated_at = now() - interval '3 days', lease_owner = null, lease_until = null where workspace_id = ${workspaceId}`.execute(db);
      await sql`update session_turns set ended_at = now() - interval '3 days' where session_id in (select id from sessions where workspace_id = ${workspaceId})`.execute(db);
      await sql`update session_messages set at = now() - interval '3 days' where session_id in (select id from sessions where workspace_id = ${workspaceId})`.execute(db);
      const { purged } = await h.service.privacy.retention.purge({ force: true });
      expect(purged.conversations).toBe(1);
      const left = await db.selectFrom('sessions').select('id').where('workspace_id', '=', workspaceId).execute();
      expect(left.map((s) => s.id).sort()).toEqual([...testSessions].sort());
      expect((await db.selectFrom('session_turns').select('id').where('session_id', 'in', testSessions).execute()).length).toBeGreaterThan(0);
    });

    it('deleting a scenario deletes its runs and their test conversations', async () => {
      const { db } = get();
      const id = await saveScenario(h.service, owner, { name: 'Short-lived', channel: 'webchat', turns: [{ customer: 'How fast do you ship?' }] });
      const run = await runScenario(h.service, owner, id);
      const sessionId = run.transcripts[0].session_id as string;
      expect(await db.selectFrom('sessions').select('id').where('id', '=', sessionId).executeTakeFirst()).toBeDefined();
      expect((await h.service.api('DELETE', `/v1/scenarios/${id}`, { token: owner })).status).toBe(204);
      expect(await db.selectFrom('sessions').select('id').where('id', '=', sessionId).executeTakeFirst()).toBeUndefined();
      expect((await h.service.api('GET', `/v1/scenario-runs/${run.id}`, { token: owner })).status).toBe(404);
    });
  });

  describe('two engines on one database', () => {
    let second: TestService;
    beforeAll(async () => {
      second = await startTestService(get(), { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, MASTER_KEY, OUTBOUND_ALLOW: '127.0.0.1/32' });
    });
    afterAll(async () => {
      await second.stop();
    });

    it('a run asked for on one engine is played once, by one of them, and either answers for it', async () => {
      const message = 'Two engines: where is order 7?';
      const id = await saveScenario(second, owner, { name: 'Two engines', channel: 'whatsapp', runs: 3, turns: [{ customer: message, expect: { contains: ['answer to'] } }] });
      const run = await runScenario(second, owner, id, {}, h.service);
      expect(run).toMatchObject({ status: 'done', runs: 3, passed: 3, pass_rate: 1 });
      const fromSecond = await second.api('GET', `/v1/scenario-runs/${run.id}`, { token: owner });
      expect(fromSecond.body).toEqual(run);
      // Played once: three conversations, one request each, whichever engine claimed it.
      await h.service.scenarios.idle();
      await second.scenarios.idle();
      expect(channelRequests(message)).toHaveLength(3);
      expect(new Set(channelRequests(message).map((r) => r.session_id)).size).toBe(3);
    });
  });
});

/** What the team sees of the workspace: its lists, notifications, the Overview, the export and the webhook outbox. */
async function teamView(service: TestService, token: string) {
  const get = async (path: string) => {
    const res = await service.api('GET', path, { token });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${res.text}`);
    return res;
  };
  const overview = (await get('/v1/analytics/overview')).body;
  const { workspaceId } = (await service.accounts.authenticate(token))!;
  const events = await service.database.db.selectFrom('webhook_events').select('id').where('workspace_id', '=', workspaceId).execute();
  return {
    sessions: (await get('/v1/sessions')).body.sessions as unknown[],
    waiting: (await get('/v1/inbox?view=waiting')).body.conversations as unknown[],
    open: (await get('/v1/inbox?view=open')).body.conversations as unknown[],
    notifications: (await get('/v1/notifications')).body.notifications as unknown[],
    conversations: overview.conversations as number,
    customerMessages: overview.customer_messages as number,
    unanswered: (await get('/v1/analytics/unanswered')).body.questions as unknown[],
    exported: (await get('/v1/exports/conversations?format=jsonl')).text,
    webhookEvents: events.length,
  };
}

async function assignedCount(h: Harness): Promise<number> {
  const rows = await h.service.database.db.selectFrom('sessions').select('id').where('assigned_user_id', 'is not', null).where('workspace_id', '=', h.workspace.workspaceId).execute();
  return rows.length;
}
