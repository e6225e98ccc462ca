/**
 * Erasing one customer everywhere (docs/privacy.md, "Export and erasure"), on both databases: a customer calls, writes
 * on WhatsApp and chats on the website (leaving a lead with their email and number, with webhooks still waiting to be
 * delivered); another customer does the same. The owner exports, then erases by phone number and by email. Afterwards
 * a scan of every text and JSON column of every table finds neither the customer's number, nor their email, nor any of
 * their messages, and the other customer's data is all still there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from '../channels/whatsapp/fixtures/harness.ts';
import { scan } from './customer-scan.ts';

const SHOP = 'https://shop.example';

interface Customer {
  phone: string;
  digits: string;
  written: string;
  email: string;
  messages: string[];
}

const sam: Customer = {
  phone: '+31611112222',
  digits: '31611112222',
  written: '+31 6 1111 2222',
  email: 'sam.erased@example.org',
  messages: ['Sam asks on the phone about zebra boots', 'Sam writes on WhatsApp about quokka tents, please pass this on', 'Sam chats about lemur socks', 'Sam only by email about okapi hats'],
};
const alex: Customer = {
  phone: '+31633334444',
  digits: '31633334444',
  written: '+31 6 3333 4444',
  email: 'alex.kept@example.org',
  messages: ['Alex asks on the phone about heron boots', 'Alex writes on WhatsApp about badger tents, please pass this on', 'Alex chats about otter socks', 'Alex only by email about lynx hats'],
};

describeEachDatabase('erasing a customer', (get) => {
  let h: Harness;
  let widgetKey = '';
  const owner = () => h.workspace.owner;
  const widget = (method: string, path: string, body?: unknown) => h.service.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP }, ...(body === undefined ? {} : { body }) });

  async function visit(c: Customer): Promise<void> {
    // The phone.
    const caller = await Caller.connect(h.service);
    caller.setup(`CA${c.digits}`, NUMBER, c.phone);
    caller.say(c.messages[0]!);
    await caller.next((f) => f.type === 'text' && f.last === true, 10_000);
    caller.ws.close();
    await caller.closed;
    // WhatsApp.
    const id = wamid();
    expect((await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: c.digits, MESSAGE_ID: id, TIMESTAMP: unixSeconds(new Date()), BODY: c.messages[1]! }))).status).toBe(200);
    await until(async () => (await get().db.selectFrom('whatsapp_inbound_messages').select('state').where('message_id', '=', id).executeTakeFirst())?.state === 'done');
    // The website: a chat with a lead (email and number as typed), and one with the email alone.
    const chat = await widget('POST', '/v1/webchat/conversations', { visitor_message: c.messages[2], page_url: `${SHOP}/socks` });
    expect(chat.status).toBe(201);
    expect((await widget('POST', `/v1/webchat/conversations/${chat.body.conversation_id as string}/lead`, { name: 'A Customer', email: c.email, phone: c.written })).status).toBe(200);
    const second = await widget('POST', '/v1/webchat/conversations', { visitor_message: c.messages[3], page_url: `${SHOP}/hats` });
    expect((await widget('POST', `/v1/webchat/conversations/${second.body.conversation_id as string}/lead`, { name: 'A Customer', email: c.email })).status).toBe(200);
  }

  async function traces(c: Customer) {
    const db = get().db;
    const found = [
      ...(await scan(db, c.digits, { digits: true })).map((hit) => ({ ...hit, what: 'number' })),
      ...(await scan(db, c.email)).map((hit) => ({ ...hit, what: 'email' })),
    ];
    for (const message of c.messages) found.push(...(await scan(db, message)).map((hit) => ({ ...hit, what: message })));
    return found;
  }

  beforeAll(async () => {
    h = await startHarness(get(), { env: { BRIDGE_TOKEN } });
    const api = (method: string, path: string, body: unknown) => h.service.api(method, path, { token: owner(), body });
    expect((await api('PUT', '/v1/phone', { numbers: [NUMBER] })).status).toBe(200);
    expect((await api('PUT', '/v1/webchat', { allowed_origins: [SHOP] })).status).toBe(200);
    // Webhooks to an address that refuses: their payloads stay in the outbox, not yet delivered.
    for (const event of ['new_chat', 'new_lead']) expect((await api('PUT', `/v1/webhooks/${event}`, { url: 'https://127.0.0.1:9/hooks' })).status).toBe(200);
    widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: owner() })).body.key as string;
    await visit(sam);
    await visit(alex);
    await h.service.runtime.settled();
    await h.service.whatsapp.worker.idle();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('finds the customer everywhere before (so the scan below could fail)', async () => {
    const before = await traces(sam);
    const tables = new Set(before.map((t) => t.table));
    for (const table of ['sessions', 'session_turns', 'session_messages', 'webchat_conversations', 'whatsapp_inbound_messages', 'whatsapp_outbound_messages', 'webhook_events']) {
      expect(tables, table).toContain(table);
    }
  });

  it('exports everything held about the customer as one JSON document, and changes nothing', async () => {
    const res = await h.service.api('POST', '/v1/privacy/export', { token: owner(), body: { phone: sam.written } });
    expect(res.status).toBe(200);
    expect(res.body.customer).toEqual({ phone: sam.phone });
    expect(res.body.found).toMatchObject({ conversations: 3, web_chat_leads: 1, whatsapp_messages: 2 });
    // The forward asked for on WhatsApp left a notification for the team.
    expect(res.body.found.notifications).toBeGreaterThanOrEqual(1);
    const text = JSON.stringify(res.body.data);
    for (const message of sam.messages.slice(0, 3)) expect(text).toContain(message);
    for (const message of alex.messages) expect(text).not.toContain(message);
    const byEmail = await h.service.api('POST', '/v1/privacy/export', { token: owner(), body: { email: sam.email.toUpperCase() } });
    expect(byEmail.body.found.conversations).toBe(2);
    expect(JSON.stringify(byEmail.body.data)).toContain(sam.messages[3]);
    expect((await traces(sam)).length).toBeGreaterThan(0);
  });

  it('refuses what is not a phone number, email or WhatsApp id (422), and two at once (400)', async () => {
    expect((await h.service.api('POST', '/v1/privacy/erase', { token: owner(), body: { phone: 'call me' } })).status).toBe(422);
    expect((await h.service.api('POST', '/v1/privacy/erase', { token: owner(), body: { phone: sam.phone, email: sam.email } })).status).toBe(400);
    expect((await h.service.api('POST', '/v1/privacy/erase', { token: h.workspace.admin, body: { phone: sam.phone } })).status).toBe(403);
  });

  it('erases by number and by email: no column of any table holds the number, the email or a message of theirs', async () => {
    const byPhone = await h.service.api('POST', '/v1/privacy/erase', { token: owner(), body: { phone: sam.written } });
    expect(byPhone.status).toBe(200);
    expect(byPhone.body.erased).toMatchObject({ conversations: 3, web_chats: 1, whatsapp_messages: 2 });
    expect(byPhone.body.erased.turns).toBeGreaterThanOrEqual(3);
    expect(byPhone.body.erased.webhook_events).toBeGreaterThanOrEqual(2);
    expect(byPhone.body.erased.notifications).toBeGreaterThanOrEqual(1);
    const byEmail = await h.service.api('POST', '/v1/privacy/erase', { token: owner(), body: { email: sam.email } });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body.erased.conversations).toBe(1);
    await h.service.runtime.settled();
    expect(await traces(sam)).toEqual([]);
    // Erasing again finds nothing.
    const again = await h.service.api('POST', '/v1/privacy/erase', { token: owner(), body: { whatsapp_id: sam.digits } });
    expect(Object.values(again.body.erased as Record<string, number>).every((n) => n === 0)).toBe(true);
  });

  it("leaves the other customer's data untouched", async () => {
    const kept = await traces(alex);
    const tables = new Set(kept.map((t) => t.table));
    for (const table of ['sessions', 'session_turns', 'session_messages', 'webchat_conversations', 'whatsapp_inbound_messages', 'whatsapp_outbound_messages', 'webhook_events']) {
      expect(tables, table).toContain(table);
    }
    for (const message of alex.messages) expect(kept.some((t) => t.what === message)).toBe(true);
    const res = await h.service.api('POST', '/v1/privacy/export', { token: owner(), body: { phone: alex.phone } });
    expect(res.body.found).toMatchObject({ conversations: 3, web_chat_leads: 1, whatsapp_messages: 2 });
  });

  describe('the audit log', () => {
    it('records the exports and erasures without the number or email', async () => {
      const res = await h.service.api('GET', '/v1/audit', { token: owner() });
      const actions = (res.body.entries as { action: string }[]).map((e) => e.action);
      expect(actions.filter((a) => a === 'customer_erased')).toHaveLength(3);
      expect(JSON.stringify(res.body)).not.toContain(sam.digits);
    });
  });
});
