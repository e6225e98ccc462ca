/**
 * A website chat as the team reads it (docs/webchat.md, "When a chat ends", "The visitor as the customer"), through
 * the real service on both databases: new_chat's dashboard_url names the conversation's session; the lead is the
 * session's customer, and stays after later turns; a chat quiet for longer than its workspace's idle period is ended
 * (kept, not deleted), others stay active; the sweep may run on several engines at once.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../../helpers/service.ts';

const SHOP = 'https://shop.example';
const PUBLIC_URL = 'https://botlink.example';

describeEachDatabase('a website chat as the team reads it', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let key: string;

  beforeAll(async () => {
    service = await startTestService(get(), { PUBLIC_URL });
    ws = await seedWorkspace(service, `Life${Date.now()}`);
    key = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key;
    // The widget answers pages of the sites the owner allowed (docs/webchat.md).
    expect((await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
  });
  afterAll(async () => {
    await service?.stop();
  });

  /** Each conversation's visitor token, which its writes carry. */
  const visitorTokens = new Map<string, string>();
  const widget = (conversationId?: string) => ({ 'x-widget-key': key, origin: SHOP, ...(conversationId ? { 'x-visitor-token': visitorTokens.get(conversationId) ?? '' } : {}) });
  async function startChat(text = 'Do you ship to Belgium?'): Promise<string> {
    const res = await service.api('POST', '/v1/webchat/conversations', { headers: widget(), body: { visitor_message: text, page_url: `${SHOP}/` } });
    expect(res.status).toBe(201);
    visitorTokens.set(res.body.conversation_id as string, res.body.visitor_token as string);
    return res.body.conversation_id as string;
  }
  async function sessionOf(conversationId: string) {
    const row = await get().db.selectFrom('sessions').selectAll().where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    return row;
  }
  async function quietFor(conversationId: string, minutes: number) {
    await get().db.updateTable('sessions').set({ updated_at: sql<Date>`now() - ${`${minutes} minutes`}::interval` }).where('external_id', '=', conversationId).execute();
  }

  describe("new_chat's dashboard_url", () => {
    it('is {PUBLIC_URL}/dashboard/conversations/{the session id}, which GET /v1/sessions/{id} answers', async () => {
      const conversationId = await startChat();
      const event = await get().db.selectFrom('webhook_events').select('payload').where('event', '=', 'new_chat').where('workspace_id', '=', ws.workspaceId).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
      const payload = event.payload as { conversation_id: string; dashboard_url: string };
      expect(payload.conversation_id).toBe(conversationId);
      const prefix = `${PUBLIC_URL}/dashboard/conversations/`;
      expect(payload.dashboard_url.startsWith(prefix)).toBe(true);
      const sessionId = payload.dashboard_url.slice(prefix.length);
      expect(sessionId).not.toBe(conversationId);
      const session = await service.api('GET', `/v1/sessions/${sessionId}`, { token: ws.agent });
      expect(session.status).toBe(200);
      expect(session.body.channel).toBe('webchat');
      // The reply is answered before its turn is written (one group commit for many sessions): the turn follows.
      await expect
        .poll(async () => (await service.api('GET', `/v1/sessions/${sessionId}`, { token: ws.agent })).body.turns.map((t: { customer_message: string }) => t.customer_message))
        .toEqual(['Do you ship to Belgium?']);
    });
  });

  describe('the lead', () => {
    it("is the session's customer, and stays so after the visitor's next message", async () => {
      const conversationId = await startChat();
      const lead = await service.api('POST', `/v1/webchat/conversations/${conversationId}/lead`, { headers: widget(conversationId), body: { name: 'Sam Jansen', email: 'sam@example.org', phone: '+31612345678' } });
      expect(lead.body.recorded).toBe(true);
      const { id } = await sessionOf(conversationId);
      expect((await service.api('GET', `/v1/sessions/${id}`, { token: ws.owner })).body.customer).toEqual({ name: 'Sam Jansen', email: 'sam@example.org', phone: '+31612345678' });
      expect((await service.api('POST', `/v1/webchat/conversations/${conversationId}/messages`, { headers: widget(conversationId), body: { message: 'And to Germany?' } })).status).toBe(200);
      await service.runtime.settled();
      const after = await service.api('GET', `/v1/sessions/${id}`, { token: ws.owner });
      expect(after.body.turns).toHaveLength(2);
      expect(after.body.customer).toEqual({ name: 'Sam Jansen', email: 'sam@example.org', phone: '+31612345678' });
      const listed = (await service.api('GET', '/v1/sessions?channel=webchat', { token: ws.owner })).body.sessions as { id: string; customer: { name: string } }[];
      expect(listed.find((s) => s.id === id)?.customer.name).toBe('Sam Jansen');
    });
  });

  describe('the idle end', () => {
    it("ends a chat quiet for longer than the workspace's setting, and only those", async () => {
      expect((await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { webchat_idle_minutes: 10 } })).status).toBe(200);
      const other = await seedWorkspace(service, `Other${Date.now()}`);
      const otherKey = (await service.api('GET', '/v1/keys/widget', { token: other.owner })).body.key as string;
      expect((await service.api('PUT', '/v1/webchat', { token: other.owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
      const quiet = await startChat('Is the tent waterproof?');
      const recent = await startChat('Do you have boots?');
      const started = await service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': otherKey, origin: SHOP }, body: { visitor_message: 'Hello?', page_url: `${SHOP}/` } });
      const elsewhere = started.body.conversation_id as string;
      await service.runtime.settled();
      await quietFor(quiet, 11);
      await quietFor(recent, 9);
      // 11 minutes is quiet for the first workspace (10) but not for the other (the default 30).
      await quietFor(elsewhere, 11);

      // Two engines sweeping at once: each chat ends once.
      const [a, b] = await Promise.all([service.endIdleWebchats(), service.endIdleWebchats()]);
      expect(a + b).toBeGreaterThanOrEqual(1);
      expect((await sessionOf(quiet)).status).toBe('ended');
      expect((await sessionOf(recent)).status).toBe('active');
      expect((await sessionOf(elsewhere)).status).toBe('active');

      // Ended, not deleted: the conversation and its turns are still there, listed as ended.
      const { id } = await sessionOf(quiet);
      const session = await service.api('GET', `/v1/sessions/${id}`, { token: ws.owner });
      expect(session.body.status).toBe('ended');
      expect(session.body.turns).toHaveLength(1);
      const ended = (await service.api('GET', '/v1/sessions?channel=webchat&status=ended', { token: ws.owner })).body.sessions as { id: string }[];
      expect(ended.map((s) => s.id)).toContain(id);
      expect(await service.endIdleWebchats()).toBe(0);

      // The visitor comes back: the same conversation goes on, active again from that turn.
      const again = await service.api('POST', `/v1/webchat/conversations/${quiet}/messages`, { headers: widget(quiet), body: { message: 'Still there?' } });
      expect(again.status).toBe(200);
      await service.runtime.settled();
      expect((await sessionOf(quiet)).status).toBe('active');
      expect((await service.api('GET', `/v1/sessions/${id}`, { token: ws.owner })).body.turns).toHaveLength(2);
    });
  });
});
