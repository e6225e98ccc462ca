import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ENTRY_EXCERPT_CHARS, MAX_DOCUMENT_BODY_BYTES, MAX_TITLE_CHARS } from '../../src/knowledge/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const shippingQa = { type: 'qa', title: 'Do you ship to Belgium?', text: 'Yes. Parcels to Belgium arrive within three working days.', language: 'en' };

describeEachDatabase('knowledge written in the dashboard, and Try a question', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let a: Awaited<ReturnType<typeof seedWorkspace>>;
  let b: Awaited<ReturnType<typeof seedWorkspace>>;
  let syncKey = '';
  /** The integrator's answer to the next channel request; null: 503. */
  let integratorAnswer: object | null = null;
  let integratorKey = '';
  const channelRequests: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    integrator = await startHttpsServer();
    // A script tries more questions in a row than a person would: Try's budget is test/knowledge/try-question.budget.test.ts's.
    service = await startTestService(get(), {}, { rateLimits: { tryQuestion: { burst: 1_000 } } });
    a = await seedWorkspace(service, 'Acme');
    b = await seedWorkspace(service, 'Globex');
    syncKey = (await service.api('POST', '/v1/keys/sync', { token: a.owner })).body.key;
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });
  beforeEach(() => {
    integrator.handle((req, res, body) => {
      if (refuseUnsigned(integratorKey, req, res, body)) return;
      channelRequests.push(JSON.parse(body.toString()) as Record<string, unknown>);
      if (integratorAnswer === null) {
        res.statusCode = 503;
        res.end();
        return;
      }
      sendJson(res, 200, integratorAnswer);
    });
  });

  const add = async (token: string, body: object) => {
    const res = await service.api('POST', '/v1/knowledge/entries', { token, body });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; [k: string]: unknown };
  };
  const tryQuestion = async (token: string, question: string, language = 'en') => {
    const res = await service.api('POST', '/v1/knowledge/try', { token, body: { question, language } });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const sync = (method: string, path: string, body?: unknown) =>
    service.api(method, path, { headers: { 'x-sync-key': syncKey }, ...(body === undefined ? {} : { body }) });

  describe('adding entries', () => {
    it('an owner adds a Q&A pair: 201 with the entry, hand-made and editable; the next question finds it', async () => {
      const entry = await add(a.owner, shippingQa);
      expect(entry).toMatchObject({ origin: 'dashboard', type: 'qa', title: shippingQa.title, text: shippingQa.text, language: 'en', editable: true, external_id: null, chunks: 1 });
      // Asked in other words: "deliver" and "Belgium" are in the question and the answer, not word for word.
      const tried = await tryQuestion(a.owner, 'How long does shipping to Belgium take?');
      expect(tried.passages[0]).toMatchObject({ entry_id: entry.id, origin: 'dashboard', type: 'qa', title: shippingQa.title });
      expect(tried.answer.source).toBe('knowledge_base');
      expect(tried.answer.text).toContain('three working days');
      expect(tried.with_integrator).toBeNull();
    });

    it('the question weighs as a title: a word only in the question finds the pair', async () => {
      const entry = await add(a.admin, { type: 'qa', title: 'Can I pay with iDEAL?', text: 'Yes, and with credit cards and PayPal too.', language: 'en' });
      const tried = await tryQuestion(a.owner, 'ideal');
      expect(tried.passages.map((p: { entry_id: string }) => p.entry_id)).toContain(entry.id);
      expect(tried.passages[0].score).toBeGreaterThan(0);
      expect(['strong', 'fair', 'weak']).toContain(tried.passages[0].match);
    });

    it('an admin adds a page; pages and Q&A pairs are listed newest first with their type', async () => {
      const page = await add(a.admin, { type: 'page', title: 'Opening hours', text: 'We are open Monday to Saturday from 9:00 to 17:30.', language: 'en' });
      expect(page.type).toBe('page');
      const list = await service.api('GET', '/v1/knowledge/entries', { token: a.agent });
      expect(list.status).toBe(200);
      expect(list.body.entries[0]).toMatchObject({ id: page.id, type: 'page', origin: 'dashboard' });
      expect(list.body.entries.map((e: { type: string }) => e.type)).toEqual(['page', 'qa', 'qa']);
      expect(list.body.next_cursor).toBeNull();
    });

    it('a long text is cut in the list and whole in GET /v1/knowledge/entries/{id}', async () => {
      const text = `${'Returns are free within thirty days. '.repeat(20)}The end.`;
      const entry = await add(a.owner, { type: 'page', title: 'Returns', text, language: 'en' });
      const listed = (await service.api('GET', '/v1/knowledge/entries?limit=1', { token: a.owner })).body;
      expect(listed.entries[0].id).toBe(entry.id);
      expect(listed.entries[0].text_cut).toBe(true);
      expect(listed.entries[0].text.length).toBeLessThanOrEqual(ENTRY_EXCERPT_CHARS + 1);
      expect(listed.next_cursor).not.toBeNull();
      const whole = await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: a.agent });
      expect(whole.body.text).toBe(text.trim());
      expect(whole.body.text_cut).toBe(false);
      const next = (await service.api('GET', `/v1/knowledge/entries?limit=1&cursor=${encodeURIComponent(listed.next_cursor)}`, { token: a.owner })).body;
      expect(next.entries[0].id).not.toBe(entry.id);
    });
  });

  describe('who may do what', () => {
    it('an agent reads but may not add, change, delete or try (403)', async () => {
      const entry = await add(a.owner, { type: 'page', title: 'Agents read this', text: 'Only owners and admins write it.' });
      expect((await service.api('GET', '/v1/knowledge/entries', { token: a.agent })).status).toBe(200);
      expect((await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: a.agent })).status).toBe(200);
      expect((await service.api('POST', '/v1/knowledge/entries', { token: a.agent, body: shippingQa })).status).toBe(403);
      expect((await service.api('PUT', `/v1/knowledge/entries/${entry.id}`, { token: a.agent, body: shippingQa })).status).toBe(403);
      expect((await service.api('DELETE', `/v1/knowledge/entries/${entry.id}`, { token: a.agent })).status).toBe(403);
      expect((await service.api('POST', '/v1/knowledge/try', { token: a.agent, body: { question: 'hi' } })).status).toBe(403);
      expect((await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: a.owner })).body.title).toBe('Agents read this');
    });

    it('without a token: 401', async () => {
      expect((await service.api('GET', '/v1/knowledge/entries')).status).toBe(401);
      expect((await service.api('POST', '/v1/knowledge/entries', { body: shippingQa })).status).toBe(401);
    });

    it("another workspace's entry is not there: 404 to read, change or delete, absent from its lists and its search", async () => {
      const entry = await add(a.owner, { type: 'qa', title: 'What is the secret discount code?', text: 'ACME-ONLY-42 gives ten percent.', language: 'en' });
      expect((await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: b.owner })).status).toBe(404);
      expect((await service.api('PUT', `/v1/knowledge/entries/${entry.id}`, { token: b.owner, body: shippingQa })).status).toBe(404);
      expect((await service.api('DELETE', `/v1/knowledge/entries/${entry.id}`, { token: b.owner })).status).toBe(404);
      expect((await service.api('GET', '/v1/knowledge/entries', { token: b.owner })).body.entries).toEqual([]);
      // Workspace b has knowledge of its own (so its search runs), and a discount code of its own.
      const own = await add(b.owner, { type: 'qa', title: 'Is there a discount code?', text: 'GLOBEX-5 gives five percent.', language: 'en' });
      const inB = await tryQuestion(b.owner, 'secret discount code');
      expect(inB.passages.map((p: { entry_id: string }) => p.entry_id)).toEqual([own.id]);
      expect(JSON.stringify(inB)).not.toContain('ACME-ONLY-42');
      // Still whole in its own workspace.
      expect((await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: a.owner })).body.text).toBe('ACME-ONLY-42 gives ten percent.');
      expect((await tryQuestion(a.owner, 'secret discount code')).passages[0].entry_id).toBe(entry.id);
    });

    it('an id that is not a UUID is 404', async () => {
      expect((await service.api('GET', '/v1/knowledge/entries/not-an-id', { token: a.owner })).status).toBe(404);
    });
  });

  describe('validation: 422 naming the field', () => {
    it.each([
      [{ ...shippingQa, title: undefined }, 'title', 'is required'],
      [{ ...shippingQa, title: '   ' }, 'title', ''],
      [{ ...shippingQa, title: 'x'.repeat(MAX_TITLE_CHARS + 1) }, 'title', ''],
      [{ ...shippingQa, text: '' }, 'text', ''],
      [{ ...shippingQa, type: 'faq' }, 'type', 'must be one of "page", "qa"'],
      [{ ...shippingQa, language: 'english please' }, 'language', ''],
      [{ ...shippingQa, colour: 'red' }, 'colour', 'is not a known field'],
    ])('%j → %s', async (body, field, message) => {
      const res = await service.api('POST', '/v1/knowledge/entries', { token: a.owner, body });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('unprocessable');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field, ...(message ? { message } : {}) })]));
    });

    it(`a text over ${MAX_DOCUMENT_BODY_BYTES} bytes (UTF-8) is 422 naming text, also when it has fewer characters`, async () => {
      const text = 'é'.repeat(MAX_DOCUMENT_BODY_BYTES / 2 + 1);
      const res = await service.api('POST', '/v1/knowledge/entries', { token: a.owner, body: { ...shippingQa, text } });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'text', message: `is ${MAX_DOCUMENT_BODY_BYTES + 2} bytes, more than ${MAX_DOCUMENT_BODY_BYTES}` }]);
    });

    it('a try without a question is 422 naming question; a body that is not JSON is refused', async () => {
      const res = await service.api('POST', '/v1/knowledge/try', { token: a.owner, body: {} });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'question', message: 'is required' }]);
      const raw = await service.api('POST', '/v1/knowledge/entries', { token: a.owner, raw: '{"type":', headers: { 'content-type': 'application/json' } });
      expect(raw.status).toBe(400);
    });
  });

  describe('hand-made and synced documents stay apart', () => {
    it('the sync API neither lists nor overwrites nor deletes a hand-made entry, even by its id', async () => {
      const entry = await add(a.owner, { type: 'page', title: 'Gift wrapping', text: 'We wrap gifts for free.', language: 'en' });
      const listed = await sync('GET', '/v1/sync/pages?limit=200');
      expect(listed.body.items.map((i: { external_id: string }) => i.external_id)).not.toContain(entry.id);
      expect((await sync('DELETE', `/v1/sync/pages/${entry.id}`)).status).toBe(404);
      const batch = await sync('POST', '/v1/sync/batch', { upserts: [], deletes: [{ kind: 'page', external_id: entry.id }] });
      expect(batch.body.deletes[0].result).toBe('not_found');
      // A plugin page with the same external_id is a page of its own.
      const put = await sync('PUT', `/v1/sync/pages/${entry.id}`, { title: 'Plugin page', body: 'From the shop.' });
      expect(put.status).toBe(201);
      expect(put.body.result).toBe('created');
      expect((await sync('DELETE', `/v1/sync/pages/${entry.id}`)).status).toBe(204);
      const after = await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: a.owner });
      expect(after.body).toMatchObject({ title: 'Gift wrapping', text: 'We wrap gifts for free.', origin: 'dashboard' });
    });

    it('synced pages are listed read-only (origin sync); the dashboard may not change or delete them (409)', async () => {
      expect((await sync('PUT', '/v1/sync/pages/delivery', { title: 'Delivery', body: 'PostNL delivers within two days.', language: 'en' })).status).toBe(201);
      const listed = (await service.api('GET', '/v1/knowledge/entries?origin=sync', { token: a.agent })).body.entries;
      const synced = listed.find((e: { external_id: string }) => e.external_id === 'delivery');
      expect(synced).toMatchObject({ origin: 'sync', type: 'page', editable: false, title: 'Delivery' });
      expect(listed.every((e: { origin: string }) => e.origin === 'sync')).toBe(true);
      const put = await service.api('PUT', `/v1/knowledge/entries/${synced.id}`, { token: a.owner, body: shippingQa });
      expect(put.status).toBe(409);
      expect(put.body.error.code).toBe('conflict');
      expect((await service.api('DELETE', `/v1/knowledge/entries/${synced.id}`, { token: a.owner })).status).toBe(409);
      const still = await sync('GET', '/v1/sync/pages?limit=200');
      expect(still.body.items.find((i: { external_id: string }) => i.external_id === 'delivery')).toMatchObject({ title: 'Delivery' });
      const tried = await tryQuestion(a.owner, 'Who delivers?');
      expect(tried.passages[0]).toMatchObject({ origin: 'sync', entry_id: synced.id, title: 'Delivery' });
    });

    it('an unknown origin or a made-up cursor is refused', async () => {
      expect((await service.api('GET', '/v1/knowledge/entries?origin=mine', { token: a.owner })).status).toBe(400);
      const cursor = await service.api('GET', '/v1/knowledge/entries?cursor=bm90LW91cnM', { token: a.owner });
      expect(cursor.status).toBe(400);
      expect(cursor.body.error.details).toEqual([{ field: 'cursor', message: 'is not one this API gave out' }]);
    });

    it('pages through a sync batch written within milliseconds: every document once', async () => {
      const upserts = Array.from({ length: 7 }, (_, i) => ({ kind: 'page', external_id: `batch-${i}`, title: `Batch page ${i}`, body: `Text ${i}.` }));
      expect((await sync('POST', '/v1/sync/batch', { upserts, deletes: [] })).status).toBe(200);
      const all = (await service.api('GET', '/v1/knowledge/entries?origin=sync&limit=200', { token: a.owner })).body.entries.map((e: { id: string }) => e.id);
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { entries: Array<{ id: string }>; next_cursor: string | null } = (await service.api('GET', `/v1/knowledge/entries?origin=sync&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { token: a.owner })).body;
        paged.push(...page.entries.map((e) => e.id));
        cursor = page.next_cursor;
      } while (cursor);
      expect(paged).toEqual(all);
      expect(all.length).toBeGreaterThanOrEqual(8);
    });
  });

  describe('changing and deleting', () => {
    it('PUT replaces the entry and its passages: the new answer is found, the old one no longer', async () => {
      const entry = await add(a.owner, { type: 'qa', title: 'Where is your warehouse?', text: 'Our warehouse is in Utrecht.', language: 'en' });
      const put = await service.api('PUT', `/v1/knowledge/entries/${entry.id}`, { token: a.admin, body: { type: 'qa', title: 'Where is your warehouse?', text: 'Our warehouse moved to Zwolle.', language: 'en' } });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ id: entry.id, text: 'Our warehouse moved to Zwolle.' });
      expect((await tryQuestion(a.owner, 'Zwolle')).passages[0]?.entry_id).toBe(entry.id);
      expect((await tryQuestion(a.owner, 'Utrecht')).passages.map((p: { entry_id: string }) => p.entry_id)).not.toContain(entry.id);
      // The same content again writes nothing.
      const again = await service.api('PUT', `/v1/knowledge/entries/${entry.id}`, { token: a.admin, body: { type: 'qa', title: 'Where is your warehouse?', text: 'Our warehouse moved to Zwolle.', language: 'en' } });
      expect(again.body.updated_at).toBe(put.body.updated_at);
    });

    it('DELETE removes the entry and its passages; a second DELETE is 404', async () => {
      const entry = await add(a.owner, { type: 'qa', title: 'Do you sell kayaks?', text: 'Yes, inflatable kayaks.', language: 'en' });
      expect((await tryQuestion(a.owner, 'kayaks')).passages[0]?.entry_id).toBe(entry.id);
      expect((await service.api('DELETE', `/v1/knowledge/entries/${entry.id}`, { token: a.owner })).status).toBe(204);
      expect((await service.api('GET', `/v1/knowledge/entries/${entry.id}`, { token: a.owner })).status).toBe(404);
      expect((await tryQuestion(a.owner, 'kayaks')).passages).toEqual([]);
      expect((await service.api('DELETE', `/v1/knowledge/entries/${entry.id}`, { token: a.owner })).status).toBe(404);
    });
  });

  describe('Try a question', () => {
    it('a question nothing answers: no passages, the honest fallback, in the language asked', async () => {
      const tried = await tryQuestion(a.owner, 'Verkopen jullie vliegtuigen?', 'nl');
      expect(tried.passages).toEqual([]);
      expect(tried.confident).toBe(false);
      expect(tried.answer.source).toBe('fallback');
      expect(tried.language).toBe('nl');
    });

    it('with the integrator: a handled answer is what the customer gets; the request was a webchat channel request', async () => {
      const saved = await service.api('PUT', '/v1/integration', { token: a.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
      integratorKey = saved.body.key;
      integratorAnswer = { reply: 'Belgium: 3 days, says our order system.', handled: true, handoff: 'forward' };
      channelRequests.length = 0;
      const tried = await tryQuestion(a.owner, 'How long does shipping to Belgium take?');
      expect(channelRequests).toHaveLength(1);
      expect(channelRequests[0]).toMatchObject({ channel: 'webchat', message: 'How long does shipping to Belgium take?', language: 'en' });
      expect(String(channelRequests[0]!.session_id)).toMatch(/^try-/);
      expect(tried.with_integrator).toMatchObject({ outcome: 'answer', handled: true, handoff: 'forward', http_status: 200 });
      expect(tried.with_integrator.answer).toEqual({ text: 'Belgium: 3 days, says our order system.', source: 'integrator' });
      // Without the integrator: the knowledge base.
      expect(tried.answer.source).toBe('knowledge_base');
      expect(tried.answer.text).toContain('three working days');
    });

    it('handled false or no answer: the customer gets the built-in AI', async () => {
      integratorAnswer = { reply: 'I only know orders.', handled: false };
      const notHandled = await tryQuestion(a.owner, 'How long does shipping to Belgium take?');
      expect(notHandled.with_integrator).toMatchObject({ outcome: 'answer', handled: false, reply: 'I only know orders.' });
      expect(notHandled.with_integrator.answer.source).toBe('knowledge_base');
      expect(notHandled.with_integrator.answer.text).toContain('three working days');

      integratorAnswer = null;
      const down = await tryQuestion(a.owner, 'How long does shipping to Belgium take?');
      expect(down.with_integrator).toMatchObject({ outcome: 'no_answer', reason: 'status', http_status: 503, reply: null, handled: null });
      expect(down.with_integrator.answer).toEqual(down.answer);
    });

    it('creates no conversation and counts as no customer traffic', async () => {
      const db = get().db;
      const sessions = await db.selectFrom('sessions').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', a.workspaceId).executeTakeFirstOrThrow();
      const events = await db.selectFrom('webhook_events').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', a.workspaceId).executeTakeFirstOrThrow();
      expect(Number(sessions.n)).toBe(0);
      expect(Number(events.n)).toBe(0);
      expect((await service.api('GET', '/v1/sessions', { token: a.owner })).body.sessions).toEqual([]);
    });
  });

  describe('pasted text follows the paragraph rule (docs/knowledge.md, "How text is read")', () => {
    it('a single line break is a space, a blank line a paragraph, and the pasted title line is not read out', async () => {
      const shop = await seedWorkspace(service, 'Initech');
      // As copied from a PDF: the title line, then lines broken inside sentences and a word hyphenated at a line end.
      const pasted = 'Returns policy\nShoes that have been worn outside\ncannot be returned. You can return any\nother item within 30 days of de-\nlivery.\n\nRefunds reach your card within a week.';
      const entry = await add(shop.owner, { type: 'page', title: 'Returns policy', text: pasted, language: 'en' });
      expect(entry.text).toBe(
        'Shoes that have been worn outside cannot be returned. You can return any other item within 30 days of delivery.\n\nRefunds reach your card within a week.',
      );
      const tried = await tryQuestion(shop.owner, 'Can I return shoes I have worn outside?');
      expect(tried.answer.source).toBe('knowledge_base');
      expect(tried.answer.text).toContain('Shoes that have been worn outside cannot be returned.');
      expect(tried.answer.text).not.toContain('Returns policy');
    });
  });
});
