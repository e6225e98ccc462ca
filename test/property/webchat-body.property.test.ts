/**
 * The website chat widget's bodies (protocol §1.3, §6; docs/webchat.md), as properties over the real service: whatever a
 * browser posts, the answer is a success or a clear 4xx, never a 5xx; what was accepted is stored, its text by the
 * outside-text rule (src/text/outside-text.ts, applied where src/http/app.ts parses JSON) and otherwise as sent.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../../src/channels/webchat/limits.ts';
import { cleanText } from '../../src/text/outside-text.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type ApiResponse, type TestService } from '../helpers/service.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText, OVER_HTTP } from './outside.ts';

const SHOP = 'https://shop.example';

/** A clear refusal: a 4xx with the JSON error body every error has. */
function expectClear(what: string, res: ApiResponse, ok: number): void {
  expect(res.status === ok || (res.status >= 400 && res.status < 500), `${what}: ${res.status} ${res.text.slice(0, 300)}`).toBe(true);
  if (res.status !== ok) expect(typeof res.body?.error?.code).toBe('string');
}

describeEachDatabase('website chat bodies, whatever a browser posts', (get) => {
  let service: TestService;
  let workspaceId = '';
  let widgetKey = '';
  let conversationId = '';

  beforeAll(async () => {
    service = await startTestService(get(), {}, { webchat: { rateLimit: { burst: 100_000, windowMs: 1_000 } } });
    const ws = await seedWorkspace(service);
    workspaceId = ws.workspaceId;
    const syncKey = (await service.api('POST', '/v1/keys/sync', { token: ws.owner })).body.key as string;
    await service.api('PUT', '/v1/sync/pages/shipping', { headers: { 'x-sync-key': syncKey }, body: { title: 'Shipping', language: 'en', body: 'We ship every order within two working days.' } });
    widgetKey = (await service.api('GET', '/v1/keys/widget', { token: ws.owner })).body.key as string;
    await service.api('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } });
    conversationId = (await widget('/v1/webchat/conversations', { visitor_message: 'Hello', page_url: `${SHOP}/` })).body.conversation_id as string;
  });
  afterAll(async () => {
    await service.stop();
  });

  /** Each conversation's visitor token, which the requests about it carry (as the widget sends it). */
  const visitorTokens = new Map<string, string>();
  const widget = async (path: string, body: unknown, raw?: string): Promise<ApiResponse> => {
    const token = visitorTokens.get(/^\/v1\/webchat\/conversations\/([^/]+)\//.exec(path)?.[1] ?? '');
    const res = await service.api('POST', path, {
      headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}), ...(raw === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(raw === undefined ? { body } : { raw }),
    });
    if (typeof res.body?.conversation_id === 'string' && typeof res.body.visitor_token === 'string') visitorTokens.set(res.body.conversation_id, res.body.visitor_token);
    return res;
  };
  const events = (conversation: string) =>
    get()
      .db.selectFrom('webhook_events')
      .select(['event', 'payload'])
      .where('workspace_id', '=', workspaceId)
      .execute()
      .then((rows) => rows.filter((r) => (r.payload as { conversation_id?: string }).conversation_id === conversation));

  const visitorMessage = fc.oneof(dirtyText, outsideText({ minLength: 1 }), outsideText({ minLength: MAX_MESSAGE_CHARS - 5, maxLength: MAX_MESSAGE_CHARS + 5 }));

  it('property: a first message holding any text starts a conversation whose new_chat and turn hold it, cleaned', async () => {
    await fc.assert(
      fc.asyncProperty(visitorMessage, fc.oneof(fc.constant(`${SHOP}/p`), fc.webUrl(), dirtyText.map((d) => `${SHOP}/p?q=${d}`)), async (message, pageUrl) => {
        const res = await widget('/v1/webchat/conversations', { visitor_message: message, page_url: pageUrl });
        expectClear('POST /v1/webchat/conversations', res, 201);
        if (res.status !== 201) return;
        expectAllClean(res.body);
        const id = res.body.conversation_id as string;
        const [newChat] = await events(id);
        expect(newChat?.payload).toMatchObject({ event: 'new_chat', visitor_message: cleanText(message).trim(), page_url: cleanText(pageUrl) });
        await service.runtime.settled();
        const turns = await get().db.selectFrom('session_turns').innerJoin('sessions', 'sessions.id', 'session_turns.session_id').select(['customer_message', 'reply']).where('sessions.external_id', '=', id).execute();
        expect(turns.map((t) => t.customer_message)).toEqual([cleanText(message).trim()]);
        expectAllClean(turns);
      }),
      { numRuns: 30, ...OVER_HTTP },
    );
  });

  it('property: a next message, a lead and an escalation holding any text are answered and stored, cleaned', async () => {
    const lead = fc.record({ name: fc.oneof(dirtyText, outsideText({ minLength: 1, maxLength: 120 })), email: fc.oneof(fc.emailAddress(), dirtyText), phone: fc.oneof(fc.constant('+31 6 1234 5678'), dirtyText) }, { requiredKeys: ['name', 'email'] });
    await fc.assert(
      fc.asyncProperty(visitorMessage, lead, fc.oneof(dirtyText, outsideText()), async (message, details, escalation) => {
        const id = (await widget('/v1/webchat/conversations', { visitor_message: 'Hello', page_url: `${SHOP}/` })).body.conversation_id as string;
        const answered = await widget(`/v1/webchat/conversations/${id}/messages`, { message });
        expectClear('POST …/messages', answered, 200);
        expectAllClean(answered.body);
        if (answered.status === 200) {
          // Acknowledged means stored: the turn is in the session, after the first one.
          await service.runtime.settled();
          const turns = await get().db.selectFrom('session_turns').innerJoin('sessions', 'sessions.id', 'session_turns.session_id').select('customer_message').where('sessions.external_id', '=', id).orderBy('ordinal').execute();
          expect(turns.map((t) => t.customer_message)).toEqual(['Hello', cleanText(message).trim()]);
        }

        const saved = await widget(`/v1/webchat/conversations/${id}/lead`, details);
        expectClear('POST …/lead', saved, 200);
        if (saved.status === 200) {
          const row = await get().db.selectFrom('webchat_conversations').select(['visitor_name', 'visitor_email', 'visitor_phone']).where('id', '=', id).executeTakeFirstOrThrow();
          expect(row).toEqual({ visitor_name: cleanText(details.name).trim(), visitor_email: cleanText(details.email).trim(), visitor_phone: cleanText(details.phone ?? '').trim() });
        }

        const escalated = await widget(`/v1/webchat/conversations/${id}/escalate`, { message: escalation });
        expectClear('POST …/escalate', escalated, 200);
        expectAllClean(await events(id));
      }),
      { numRuns: 25, ...OVER_HTTP },
    );
  });

  it('property: any JSON body, and bodies nested thousands of levels deep, get a 2xx or a clear 4xx on every widget route', async () => {
    const routes = ['/v1/webchat/conversations', `/v1/webchat/conversations/${'00000000-0000-4000-8000-000000000000'}/messages`, '/v1/webchat/conversations/{id}/messages', '/v1/webchat/conversations/{id}/lead', '/v1/webchat/conversations/{id}/escalate'];
    const body = fc.oneof(
      outsideJson().map((v) => JSON.stringify(v)),
      fc.dictionary(fc.constantFrom('visitor_message', 'page_url', 'message', 'language', 'name', 'email', 'phone'), fc.oneof(outsideText(), outsideJson(2))).map((v) => JSON.stringify(v)),
      fc.integer({ min: 1, max: 100_000 }).map((depth) => nestedJsonText(depth, '"\\u0000"')),
      fc.integer({ min: 1, max: 100_000 }).map((depth) => `{"message":${nestedJsonText(depth, '"\\ud800"')}}`),
      outsideText(),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), body, async (route, raw) => {
        const res = await widget(route.replace('{id}', conversationId), undefined, raw);
        expect(res.status < 500, `${route}: ${res.status} ${res.text.slice(0, 300)}`).toBe(true);
        if (res.status >= 400) expect(typeof res.body?.error?.code).toBe('string');
        expectAllClean(res.body);
      }),
      { numRuns: 40, ...OVER_HTTP },
    );
  });
});
