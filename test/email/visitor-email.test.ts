/**
 * An agent's reply to a web chat visitor who left (docs/webchat.md, "Replies by email"), through a real SMTP server on
 * loopback (smtp-server): a visitor gone for VISITOR_GONE_MINUTES who left an email gets the reply by email (the
 * shop's name, the reply, a link to the page; HTML escaped); one who left no email does not; one still here does not;
 * an email SMTP refused for a while is kept and sent on a later try.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { startTestSmtp, type ReceivedMail, type TestSmtp } from '../helpers/smtp-server.ts';

const SHOP = 'https://shop.example';

describeEachDatabase('replies by email to web chat visitors who left', (get) => {
  let a: TestService;
  let smtp: TestSmtp;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  let inbox: ReceivedMail[] = [];

  const widget = (method: string, path: string, body?: unknown, token?: string) =>
    a.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const api = (method: string, path: string, token: string, body?: unknown) => a.api(method, path, { token, ...(body === undefined ? {} : { body }) });

  async function heldChat(text: string, lead: { name: string; email: string } | null) {
    const res = await widget('POST', '/v1/webchat/conversations', { visitor_message: text, page_url: `${SHOP}/orders` });
    expect(res.status).toBe(201);
    const conversationId = res.body.conversation_id as string;
    const token = res.body.visitor_token as string;
    await a.runtime.settled();
    // The widget polls as soon as a conversation exists: the visitor is seen.
    expect((await widget('GET', `/v1/webchat/conversations/${conversationId}/messages`, undefined, token)).status).toBe(200);
    if (lead) expect((await widget('POST', `/v1/webchat/conversations/${conversationId}/lead`, lead, token)).status).toBe(200);
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    expect((await api('POST', `/v1/sessions/${session.id}/takeover`, ws.agent)).status).toBe(200);
    return { conversationId, sessionId: session.id };
  }

  /** The widget's last poll was `minutes` ago (VISITOR_GONE_MINUTES is 3). */
  async function lastSeen(conversationId: string, minutes: number) {
    await get().db.updateTable('webchat_visitor_state').set({ seen_at: new Date(Date.now() - minutes * 60_000) }).where('conversation_id', '=', conversationId).execute();
  }

  const outbox = (sessionId: string) => get().db.selectFrom('email_outbox').selectAll().where('session_id', '=', sessionId).execute();

  beforeAll(async () => {
    smtp = await startTestSmtp();
    inbox = smtp.received;
    a = await startTestService(get(), { SMTP_URL: smtp.url, SMTP_FROM: 'Acme <chat@acme.example>', VISITOR_GONE_MINUTES: '3' }, { email: { pollMs: 100, retryBaseMs: 200 } });
    ws = await seedWorkspace(a, 'Acme');
    expect((await api('PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api('GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(async () => {
    await a?.stop();
    await smtp?.close();
  });

  it('says on the inbox settings that email is set', async () => {
    expect((await api('GET', '/v1/inbox/settings', ws.agent)).body.email).toEqual({ configured: true });
  });

  it('emails the reply to a visitor who left and gave an email', async () => {
    const chat = await heldChat('Where is order 1042?', { name: 'Dana', email: 'dana@example.org' });
    await lastSeen(chat.conversationId, 10);
    const reply = 'It ships tomorrow <b>for sure</b> & tracked.';
    expect((await api('POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: reply })).status).toBe(201);
    await expect.poll(() => inbox.find((m) => m.to.includes('dana@example.org')), { timeout: 5_000 }).toBeTruthy();
    const mail = inbox.find((m) => m.to.includes('dana@example.org'))!;
    expect(mail.subject).toContain('Acme');
    expect(mail.text).toContain(reply);
    expect(mail.text).toContain(`${SHOP}/orders`);
    expect(mail.html).toContain('&#60;b&#62;for sure&#60;/b&#62; &#38; tracked.');
    expect(mail.html).not.toContain('<b>for sure</b>');
    // Marked sent once the server took it.
    await expect.poll(async () => (await outbox(chat.sessionId)).map((r) => r.sent_at !== null), { timeout: 5_000 }).toEqual([true]);
  });

  it('sends nothing to a visitor who left no email, nor to one who is still here', async () => {
    const noEmail = await heldChat('Do you have this in blue?', null);
    await lastSeen(noEmail.conversationId, 10);
    expect((await api('POST', `/v1/sessions/${noEmail.sessionId}/messages`, ws.agent, { text: 'Yes, in three sizes.' })).status).toBe(201);
    const present = await heldChat('Is the shop open on Sunday?', { name: 'Lee', email: 'lee@example.org' });
    await lastSeen(present.conversationId, 1);
    expect((await api('POST', `/v1/sessions/${present.sessionId}/messages`, ws.agent, { text: 'From 12 to 5.' })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    expect(await outbox(noEmail.sessionId)).toHaveLength(0);
    expect(await outbox(present.sessionId)).toHaveLength(0);
    expect(inbox.some((m) => m.to.includes('lee@example.org'))).toBe(false);
  });

  it('keeps an email SMTP refused for a while and sends it on a later try', async () => {
    smtp.refuse(2);
    const chat = await heldChat('Can I pay by invoice?', { name: 'Kim', email: 'kim@example.org' });
    await lastSeen(chat.conversationId, 5);
    expect((await api('POST', `/v1/sessions/${chat.sessionId}/messages`, ws.agent, { text: 'Yes, for orders over 50 euros.' })).status).toBe(201);
    await expect.poll(() => inbox.some((m) => m.to.includes('kim@example.org')), { timeout: 10_000 }).toBe(true);
    await expect.poll(async () => (await outbox(chat.sessionId))[0]?.sent_at ?? null, { timeout: 5_000 }).not.toBeNull();
    const [row] = await outbox(chat.sessionId);
    expect(row!.attempts).toBe(3);
    expect(row!.last_error).toBeNull();
    expect(smtp.refusalsLeft()).toBe(0);
  });
});
