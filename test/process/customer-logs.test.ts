/**
 * Logs without customers' words (docs/privacy.md, "Logs"): the real service as `node src/main.ts` in its own process
 * at LOG_LEVEL=debug, driven on the phone, WhatsApp (with its replies failing at Meta) and the website chat (a lead
 * with an email and a number, a lead refused). No line at info or above holds a customer's message, phone number or
 * email; the debug line of each customer message has its words redacted, as LOG_CUSTOMER_DATA is off.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../src/channels/whatsapp/signature.ts';
import { fixture, unixSeconds } from '../channels/whatsapp/fixtures/meta.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../helpers/phone-caller.ts';
import { api, freePort, startServiceProcess, type ServiceProcess } from '../../harness/service-process.ts';
import type { TestService } from '../helpers/service.ts';

const ADMIN_TOKEN = 'admin-token-for-the-customer-logs-test-0123456789';
const APP_SECRET = 'app-secret-for-the-customer-logs-test';
const PHONE_NUMBER_ID = '1065403522429';
const SHOP = 'https://shop.example';

const customer = {
  phone: '+31655556666',
  digits: '31655556666',
  written: '+31 6 5555 6666',
  email: 'robin.private@example.org',
  said: ['Robin calls about a wombat jacket', 'Robin writes about the narwhal backpack', 'Robin chats about pangolin gloves'],
};

describe('the service process logs no customer data at info and above', { timeout: 120_000 }, () => {
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startServiceProcess({
      port: await freePort(),
      readyTimeoutMs: 60_000,
      env: {
        DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-logs-')),
        ADMIN_TOKEN,
        BRIDGE_TOKEN,
        WHATSAPP_APP_SECRET: APP_SECRET,
        WHATSAPP_VERIFY_TOKEN: 'verify-token-for-the-logs-test',
        // Meta's API refuses: the reply's failure is logged too.
        WHATSAPP_GRAPH_URL: 'https://127.0.0.1:9/v21.0',
        OUTBOUND_ALLOW: '127.0.0.1/32',
        LOG_LEVEL: 'debug',
      },
    });
    const created = await api(service.url, 'POST', '/v1/admin/workspaces', ADMIN_TOKEN, { name: 'Logs', owner_email: 'owner@logs.example' });
    const owner = (created.owner as { token: string }).token;
    await api(service.url, 'PUT', '/v1/phone', owner, { numbers: [NUMBER] });
    await api(service.url, 'PUT', '/v1/whatsapp', owner, { phone_number_id: PHONE_NUMBER_ID, access_token: 'EAAG-logs-test-token' });
    await api(service.url, 'PUT', '/v1/webchat', owner, { allowed_origins: [SHOP] });
    const widgetKey = (await api(service.url, 'GET', '/v1/keys/widget', owner)).key as string;

    // The phone.
    const caller = await Caller.connect({ url: service.url } as TestService);
    caller.setup('CAlogs1', NUMBER, customer.phone);
    caller.say(customer.said[0]!);
    await caller.next((f) => f.type === 'text' && f.last === true, 20_000);
    caller.ws.close();
    await caller.closed;

    // WhatsApp.
    const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: customer.digits, MESSAGE_ID: 'wamid.LOGS000001', TIMESTAMP: unixSeconds(new Date()), BODY: customer.said[1]! });
    const posted = await fetch(`${service.url}/v1/whatsapp/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signWebhookBody(APP_SECRET, body) }, body });
    expect(posted.status).toBe(200);

    // The website chat: a lead, and a lead refused (its email is not one).
    let visitorToken = '';
    const widget = (path: string, payload: unknown) =>
      fetch(service.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-widget-key': widgetKey, origin: SHOP, 'x-visitor-token': visitorToken }, body: JSON.stringify(payload) });
    const chat = (await (await widget('/v1/webchat/conversations', { visitor_message: customer.said[2], page_url: `${SHOP}/gloves` })).json()) as { conversation_id: string; visitor_token: string };
    visitorToken = chat.visitor_token;
    expect((await widget(`/v1/webchat/conversations/${chat.conversation_id}/lead`, { name: 'Robin Private', email: customer.email, phone: customer.written })).status).toBe(200);
    expect((await widget(`/v1/webchat/conversations/${chat.conversation_id}/lead`, { name: 'Robin Private', email: `not an email ${customer.email}`, phone: customer.written })).status).toBe(400);
    expect((await widget(`/v1/webchat/conversations/${chat.conversation_id}/messages`, { message: `${customer.said[2]} and my number is ${customer.written}` })).status).toBe(200);

    // The WhatsApp message handled (its reply failed at Meta), then the process drained: every line is written.
    const deadline = Date.now() + 30_000;
    while (!service.lines.some((l) => l.msg === 'WhatsApp message handled') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await service.stop();
  });
  afterAll(async () => {
    await service?.kill();
  });

  it('drove every channel (the debug lines saw three customer messages at least)', () => {
    const messages = service.lines.filter((l) => l.msg === 'customer message');
    expect(messages.length).toBeGreaterThanOrEqual(3);
    expect(service.lines.some((l) => l.msg === 'WhatsApp message handled')).toBe(true);
    // Lines at info and above to search (requests log at debug since the first start's log was made readable).
    expect(service.lines.filter((l) => l.level >= 30).length).toBeGreaterThanOrEqual(5);
    expect(service.lines.some((l) => l.level === 20 && l.msg === 'request completed')).toBe(true);
  });

  it('holds no message, number or email of the customer in any line at info or above', () => {
    const text = service.lines.filter((l) => l.level >= 30).map((l) => JSON.stringify(l)).join('\n');
    for (const words of customer.said) expect(text).not.toContain(words);
    expect(text).not.toContain(customer.digits);
    expect(text).not.toContain(customer.written);
    expect(text.toLowerCase()).not.toContain(customer.email);
  });

  it('redacts the words in the debug line of each customer message (LOG_CUSTOMER_DATA is off)', () => {
    const all = service.lines.map((l) => JSON.stringify(l)).join('\n');
    for (const words of customer.said) expect(all).not.toContain(words);
    const line = service.lines.find((l) => l.msg === 'customer message')!;
    expect(line.text).toBe('[redacted]');
  });
});
