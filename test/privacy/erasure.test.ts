/**
 * Erasing one customer, exactly and in one workspace only (docs/privacy.md, "Export and erasure"), on both databases.
 *
 * Two workspaces: "Beta" (B, the one that erases, connected to the integrator) and "Other" (A). Sam calls, writes on
 * WhatsApp and chats on the website in both, with the same number and email. Kim does the same in B only; on WhatsApp
 * the integrator gives Kim's email, and Kim's web chat lead is later replaced by another. Lee leaves a lead in B too.
 * Erasing Sam in B changes no row of A; erasing Kim by email and number leaves nothing of Kim in any text or JSON column
 * of any table; a raw Meta body not yet processed survives the erasure and goes once processed.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOMER_TABLES, customerTables } from '../../src/privacy/customer-tables.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { seedWorkspace } from '../helpers/service.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';
import { scan, tableNames } from './customer-scan.ts';

const SHOP = 'https://shop.example';
const OTHER_NUMBER = '+31207654321';
const OTHER_PHONE_NUMBER_ID = '106540352299999';

interface Customer {
  phone: string;
  digits: string;
  written: string;
  email: string;
  profile: string;
}

const sam: Customer = { phone: '+31611112222', digits: '31611112222', written: '+31 6 1111 2222', email: 'sam.erased@example.org', profile: 'Samantha Quill' };
const kim: Customer = { phone: '+31655556666', digits: '31655556666', written: '0031 6 5555 6666', email: 'kim.erased@example.org', profile: 'Kimberly Vortex' };
const KIM_LATER_EMAIL = 'kim.later@example.org';
const LEE_EMAIL = 'lee.kept@example.org';

/** What each customer says, per workspace: words found nowhere else. */
const said = {
  samB: ['Sam in Beta asks on the phone about zebra boots', 'Sam in Beta writes on WhatsApp about quokka tents', 'Sam in Beta chats about lemur socks'],
  samA: ['Sam in Other asks on the phone about heron boots', 'Sam in Other writes on WhatsApp about badger tents', 'Sam in Other chats about otter socks'],
  kim: ['Kim asks on the phone about narwhal gloves', 'Kim writes on WhatsApp about axolotl scarves, my email is on file', 'Kim chats about pangolin hats'],
  lee: 'Lee chats about walrus belts',
};

type Api = (method: string, path: string, body?: unknown) => ReturnType<Harness['service']['api']>;

describeEachDatabase('erasing a customer', (get) => {
  let h: Harness;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;
  const keys = { B: '', A: '' };
  const apiB: Api = (method, path, body) => h.service.api(method, path, { token: h.workspace.owner, ...(body === undefined ? {} : { body }) });
  const apiA: Api = (method, path, body) => h.service.api(method, path, { token: other.owner, ...(body === undefined ? {} : { body }) });
  const widget = (ws: 'A' | 'B', method: string, path: string, body?: unknown) =>
    h.service.api(method, path, { headers: { 'x-widget-key': keys[ws], origin: SHOP }, ...(body === undefined ? {} : { body }) });
  const db = () => get().db;

  const metaBody = (pnid: string, c: Customer, text: string, id = wamid()) =>
    Buffer.from(fixture('text-message', { PHONE_NUMBER_ID: pnid, WA_ID: c.digits, MESSAGE_ID: id, TIMESTAMP: unixSeconds(new Date()), BODY: text }).toString('latin1').replace('Sheena Nelson', c.profile), 'latin1');

  async function call(c: Customer, to: string, words: string): Promise<void> {
    const caller = await Caller.connect(h.service);
    caller.setup(`CA${c.digits}${to.slice(-3)}`, to, c.phone);
    caller.say(words);
    await caller.next((f) => f.type === 'text' && f.last === true, 10_000);
    caller.ws.close();
    await caller.closed;
  }

  async function whatsapp(pnid: string, c: Customer, text: string): Promise<void> {
    const id = wamid();
    expect((await h.post(metaBody(pnid, c, text, id))).status).toBe(200);
    await until(async () => (await db().selectFrom('whatsapp_inbound_messages').select('state').where('message_id', '=', id).executeTakeFirst())?.state === 'done');
  }

  async function chat(ws: 'A' | 'B', words: string, leads: { name: string; email: string; phone: string }[]): Promise<string> {
    const started = await widget(ws, 'POST', '/v1/webchat/conversations', { visitor_message: words, page_url: `${SHOP}/page` });
    expect(started.status).toBe(201);
    const id = started.body.conversation_id as string;
    const token = started.body.visitor_token as string;
    for (const lead of leads) {
      const res = await h.service.api('POST', `/v1/webchat/conversations/${id}/lead`, { headers: { 'x-widget-key': keys[ws], origin: SHOP, 'x-visitor-token': token }, body: lead });
      expect(res.status).toBe(200);
    }
    return id;
  }

  /** Erases in B, checking that what was found per table is what was erased. */
  async function erase(body: Record<string, string>) {
    const res = await apiB('POST', '/v1/privacy/erase', body);
    expect(res.status).toBe(200);
    expect(res.body.erased).toEqual(res.body.found);
    return res.body as { found: Record<string, number>; erased: Record<string, number>; erased_once_processed: Record<string, number> };
  }

  /**
   * How many rows of every table belong to workspace A: by its own workspace_id, or through its sessions, users or
   * deliveries. Tables of no workspace (migrations, job claims, engines' watches, the sign-in throttle) are left out.
   */
  async function rowsOfA(): Promise<Record<string, number>> {
    const { rows: withWorkspace } = await sql<{ table_name: string }>`
      select table_name from information_schema.columns where table_schema = current_schema() and column_name = 'workspace_id'`.execute(db());
    const owned = new Set(withWorkspace.map((r) => r.table_name));
    const a = other.workspaceId;
    const sessionsOfA = sql`select id from sessions where workspace_id = ${a}`;
    const through: Record<string, ReturnType<typeof sql>> = {
      session_turns: sql`session_id in (${sessionsOfA})`,
      session_messages: sql`session_id in (${sessionsOfA})`,
      analytics_handed_over: sql`session_id in (${sessionsOfA})`,
      webhook_attempts: sql`delivery_id in (select id from webhook_deliveries where workspace_id = ${a})`,
      live_events: sql`key = ${a} or key in (select id::text from sessions where workspace_id = ${a})`,
      tokens: sql`user_id in (select id from users where workspace_id = ${a})`,
      invites: sql`user_id in (select id from users where workspace_id = ${a})`,
      sign_in_addresses: sql`user_id in (select id from users where workspace_id = ${a})`,
      whatsapp_webhook_events: sql`workspace_id = ${a} or (workspace_id is null and position(${OTHER_PHONE_NUMBER_ID} in body) > 0)`,
      workspaces: sql`id = ${a}`,
    };
    const counts: Record<string, number> = {};
    for (const table of await tableNames(db())) {
      const where = through[table] ?? (owned.has(table) ? sql`workspace_id = ${a}` : null);
      if (!where) continue;
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where ${where}`.execute(db());
      counts[table] = rows[0]!.n;
    }
    return counts;
  }

  /**
   * A's rows after an erasure in B: every count the same, but for the delivery attempts of A's webhooks, which the
   * delivery worker keeps adding while it retries A's refusing receiver (an erasure could only make them fewer).
   */
  function expectUnchangedA(before: Record<string, number>, after: Record<string, number>) {
    const { webhook_attempts: attemptsBefore = 0, ...restBefore } = before;
    const { webhook_attempts: attemptsAfter = 0, ...restAfter } = after;
    expect(restAfter).toEqual(restBefore);
    expect(attemptsAfter).toBeGreaterThanOrEqual(attemptsBefore);
  }

  async function traces(c: Customer, words: string[], emails: string[] = [c.email]) {
    const found = (await scan(db(), c.digits, { digits: true })).map((hit) => ({ ...hit, what: 'number' }));
    for (const email of emails) found.push(...(await scan(db(), email)).map((hit) => ({ ...hit, what: email })));
    found.push(...(await scan(db(), c.profile)).map((hit) => ({ ...hit, what: 'profile name' })));
    for (const w of words) found.push(...(await scan(db(), w)).map((hit) => ({ ...hit, what: w })));
    return found;
  }

  beforeAll(async () => {
    h = await startHarness(get(), {
      env: { BRIDGE_TOKEN },
      // The integrator knows Kim's email from the WhatsApp conversation and gives it as the customer's.
      answer: (request) => (request.message.includes('axolotl') ? { reply: 'Noted, Kim.', customer: { email: kim.email } } : undefined),
    });
    other = await seedWorkspace(h.service, 'Other');
    expect((await apiB('PUT', '/v1/phone', { numbers: [NUMBER] })).status).toBe(200);
    expect((await apiA('PUT', '/v1/phone', { numbers: [OTHER_NUMBER] })).status).toBe(200);
    expect((await apiA('PUT', '/v1/whatsapp', { phone_number_id: OTHER_PHONE_NUMBER_ID, access_token: 'EAAGotherWorkspaceToken0123456789abcdef' })).status).toBe(200);
    for (const api of [apiA, apiB]) {
      expect((await api('PUT', '/v1/webchat', { allowed_origins: [SHOP] })).status).toBe(200);
      // Webhooks to an address that refuses: their payloads stay in the outbox, not yet delivered.
      for (const event of ['new_chat', 'new_lead']) expect((await api('PUT', `/v1/webhooks/${event}`, { url: 'https://127.0.0.1:9/hooks' })).status).toBe(200);
    }
    keys.B = (await apiB('GET', '/v1/keys/widget')).body.key as string;
    keys.A = (await apiA('GET', '/v1/keys/widget')).body.key as string;

    await call(sam, OTHER_NUMBER, said.samA[0]!);
    await whatsapp(OTHER_PHONE_NUMBER_ID, sam, said.samA[1]!);
    await chat('A', said.samA[2]!, [{ name: 'Sam', email: sam.email, phone: sam.written }]);
    await call(sam, NUMBER, said.samB[0]!);
    await whatsapp(PHONE_NUMBER_ID, sam, said.samB[1]!);
    await chat('B', said.samB[2]!, [{ name: 'Sam', email: sam.email, phone: sam.written }]);
    await call(kim, NUMBER, said.kim[0]!);
    await whatsapp(PHONE_NUMBER_ID, kim, said.kim[1]!);
    await chat('B', said.kim[2]!, [{ name: 'Kim', email: kim.email, phone: kim.written }, { name: 'Kim', email: KIM_LATER_EMAIL, phone: '' }]);
    await chat('B', said.lee, [{ name: 'Lee', email: LEE_EMAIL, phone: '' }]);
    await h.service.runtime.settled();
    await h.service.whatsapp.worker.idle();
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('the map of tables', () => {
    it('has an entry for every table of the database', async () => {
      const tables = await tableNames(db());
      expect(tables.length).toBeGreaterThan(30);
      expect(tables.filter((t) => !(t in CUSTOMER_TABLES))).toEqual([]);
    });

    it("reaches every table where a customer's number, email, name or words are stored", async () => {
      const reached = new Set(customerTables().map(([t]) => t));
      const seen = new Set((await traces(kim, said.kim, [kim.email, KIM_LATER_EMAIL])).map((hit) => hit.table));
      for (const table of ['sessions', 'session_turns', 'session_messages', 'webchat_conversations', 'webchat_earlier_leads', 'whatsapp_inbound_messages', 'whatsapp_outbound_messages', 'whatsapp_conversations', 'whatsapp_webhook_events', 'webhook_events']) {
        expect(seen, table).toContain(table);
      }
      expect([...seen].filter((t) => !reached.has(t as never))).toEqual([]);
    });
  });

  it('refuses a part of a number, a number that is not E.164, and two keys at once (400); admins may not (403)', async () => {
    for (const body of [{ whatsapp_id: '202' }, { whatsapp_id: '+202' }, { whatsapp_id: '0611112222' }, { whatsapp_id: '31 6 1111 2222' }, { phone: '+202' }, { phone: 'call me' }, { email: 'sam' }, { phone: sam.phone, email: sam.email }]) {
      expect((await apiB('POST', '/v1/privacy/erase', body)).status, JSON.stringify(body)).toBe(400);
      expect((await apiB('POST', '/v1/privacy/export', body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await h.service.api('POST', '/v1/privacy/erase', { token: h.workspace.admin, body: { phone: sam.phone } })).status).toBe(403);
  });

  it("exports the customer's rows of this workspace only, table by table, and changes nothing", async () => {
    const before = await rowsOfA();
    const res = await apiB('POST', '/v1/privacy/export', { phone: sam.written });
    expect(res.status).toBe(200);
    expect(res.body.customer).toEqual({ phone: sam.phone });
    expect(res.body.found).toMatchObject({ sessions: 3, webchat_conversations: 1, whatsapp_inbound_messages: 1, whatsapp_conversations: 1, whatsapp_webhook_events: 1 });
    // The same counts in an owner's words, each kind once, as the dashboard and the audit log show them.
    expect(res.body.said).toMatch(/^1 website chat, 3 conversations, .*\b\d+ messages\b/);
    expect(res.body.said).toContain('1 website chat');
    expect(res.body.said).toContain('1 WhatsApp contact');
    expect(res.body.said).not.toMatch(/_|sessions|webchat/);
    const text = JSON.stringify(res.body.data);
    for (const words of said.samB) expect(text).toContain(words);
    for (const words of [...said.samA, ...said.kim, said.lee]) expect(text).not.toContain(words);
    expectUnchangedA(before, await rowsOfA());
  });

  it('erasing in B changes no row of A, though A has the same customer', async () => {
    const before = await rowsOfA();
    expect(before.sessions).toBeGreaterThanOrEqual(3);
    expect(before.whatsapp_webhook_events).toBeGreaterThanOrEqual(1);
    const erased = await erase({ whatsapp_id: sam.digits });
    expect(erased.erased).toMatchObject({ sessions: 3, whatsapp_webhook_events: 1, whatsapp_inbound_messages: 1, whatsapp_conversations: 1, webchat_conversations: 1 });
    await h.service.runtime.settled();
    expectUnchangedA(before, await rowsOfA());
    // B's words are gone everywhere; A's are all there.
    for (const words of said.samB) expect(await scan(db(), words), words).toEqual([]);
    for (const words of said.samA) expect((await scan(db(), words)).length, words).toBeGreaterThan(0);
    const inA = await apiA('POST', '/v1/privacy/export', { phone: sam.phone });
    expect(inA.body.found).toMatchObject({ sessions: 3, whatsapp_webhook_events: 1, whatsapp_inbound_messages: 1 });
  });

  it('keeps a raw Meta body that is not processed yet, and erases it once it is', async () => {
    const before = await rowsOfA();
    // Another engine holds the body: read, not yet processed.
    const id = crypto.randomUUID();
    const body = metaBody(PHONE_NUMBER_ID, sam, 'Sam in Beta again, about yak mittens').toString('latin1');
    await db().insertInto('whatsapp_webhook_events').values({ id, body, lease_owner: 'another-engine', lease_until: new Date(Date.now() + 60_000) }).execute();
    const erased = await erase({ phone: sam.phone });
    expect(erased.erased_once_processed).toEqual({ whatsapp_webhook_events: 1 });
    const kept = await db().selectFrom('whatsapp_webhook_events').select(['erase_after_processing', 'processed_at']).where('id', '=', id).executeTakeFirst();
    expect(kept).toEqual({ erase_after_processing: true, processed_at: null });
    expectUnchangedA(before, await rowsOfA());
    // The other engine's lease runs out; this engine processes the body, and with that it goes.
    await db().updateTable('whatsapp_webhook_events').set({ lease_owner: null, lease_until: new Date(Date.now() - 1000) }).where('id', '=', id).execute();
    h.service.whatsapp.worker.wake();
    await until(async () => (await db().selectFrom('whatsapp_webhook_events').select('id').where('id', '=', id).executeTakeFirst()) === undefined);
    const message = await db().selectFrom('whatsapp_inbound_messages').select('event_id').where('workspace_id', '=', h.workspace.workspaceId).where('wa_id', '=', sam.digits).executeTakeFirst();
    expect(message).toEqual({ event_id: null });
    await h.service.whatsapp.worker.idle();
    await h.service.runtime.settled();
    expectUnchangedA(before, await rowsOfA());
  });

  describe('by email', () => {
    it("the email the integrator gave on WhatsApp erases the WhatsApp customer's messages, replies, profile name and raw bodies", async () => {
      const session = await db().selectFrom('sessions').select('customer_email').where('workspace_id', '=', h.workspace.workspaceId).where('channel', '=', 'whatsapp').where('customer_phone', '=', kim.phone).executeTakeFirst();
      expect(session?.customer_email).toBe(kim.email);
      const exported = await apiB('POST', '/v1/privacy/export', { email: kim.email.toUpperCase() });
      expect(exported.body.found).toMatchObject({ whatsapp_inbound_messages: 1, whatsapp_outbound_messages: 1, whatsapp_conversations: 1, whatsapp_webhook_events: 1 });
      const erased = await erase({ email: kim.email.toUpperCase() });
      // The web chat is found by the lead Kim replaced: its lead now and its session name the later email only.
      expect(erased.erased).toMatchObject({ whatsapp_inbound_messages: 1, whatsapp_outbound_messages: 1, whatsapp_conversations: 1, whatsapp_webhook_events: 1, webchat_conversations: 1, webchat_earlier_leads: 1 });
      for (const table of ['whatsapp_inbound_messages', 'whatsapp_outbound_messages', 'whatsapp_conversations', 'whatsapp_webhook_events']) {
        expect((await scan(db(), kim.digits, { digits: true })).map((hit) => hit.table), table).not.toContain(table);
      }
      expect(await scan(db(), kim.profile)).toEqual([]);
      expect(await scan(db(), said.kim[1]!)).toEqual([]);
    });

    it('an earlier lead email still finds the chat, and the later one was erased with it', async () => {
      // Erased with the rest above, found through the lead Kim gave first.
      expect(await scan(db(), said.kim[2]!)).toEqual([]);
      expect(await scan(db(), KIM_LATER_EMAIL)).toEqual([]);
      expect(await scan(db(), kim.email)).toEqual([]);
    });

    it("leaves another visitor's lead and chat", async () => {
      const hits = new Set([...(await scan(db(), LEE_EMAIL)), ...(await scan(db(), said.lee))].map((hit) => hit.table));
      for (const table of ['webchat_conversations', 'sessions', 'session_turns', 'webhook_events']) expect(hits, table).toContain(table);
    });
  });

  it('after erasing by email and number, no text or JSON column of any table holds anything of a customer who used all three channels', async () => {
    // The phone call knew Kim's number only.
    expect((await scan(db(), said.kim[0]!)).length).toBeGreaterThan(0);
    const erased = await erase({ phone: kim.written });
    expect(erased.erased.sessions).toBe(1);
    await h.service.runtime.settled();
    expect(await traces(kim, said.kim, [kim.email, KIM_LATER_EMAIL])).toEqual([]);
    // Erasing again finds nothing.
    const again = await erase({ whatsapp_id: kim.digits });
    expect(Object.values(again.erased).every((n) => n === 0)).toBe(true);
  });

  it('records the exports and erasures in the audit log without the number or email', async () => {
    const res = await apiB('GET', '/v1/audit');
    expect((res.body.entries as { action: string }[]).filter((e) => e.action === 'customer_erased').length).toBeGreaterThanOrEqual(4);
    const text = JSON.stringify(res.body);
    for (const value of [sam.digits, kim.digits, kim.email, sam.email]) expect(text).not.toContain(value);
  });
});
