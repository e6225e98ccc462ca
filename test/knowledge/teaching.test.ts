/**
 * The team teaches the bot (docs/knowledge.md, "The team teaches the bot"), through the HTTP API on both databases: a
 * web chat question the bot could not answer is answered, after "Add as an answer", when a new visitor asks it; a
 * customer's wording added to a page ("This page answers it") makes that wording find the page; who may do it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { MAX_PHRASING_CHARS, MAX_TEAM_PHRASINGS_PER_DOCUMENT } from '../../src/knowledge/phrasing-limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';
const GIFT_CARDS = 'Do you sell gift cards?';
const GIFT_CARDS_ANSWER = 'Yes: gift cards of 25, 50 and 100 euro, in the shop and on the website.';

describeEachDatabase('the team teaches the bot', (get) => {
  let service: TestService;
  let a: Awaited<ReturnType<typeof seedWorkspace>>;
  let b: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';

  const api = (method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  /** A new visitor's first message in the web chat: the bot's reply and the conversation's session id. */
  async function visitorAsks(text: string): Promise<{ reply: string | null; sessionId: string; token: string; conversationId: string }> {
    const res = await service.api('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKey, origin: SHOP }, body: { visitor_message: text, page_url: `${SHOP}/` } });
    expect(res.status, res.text).toBe(201);
    await service.runtime.settled();
    const conversationId = res.body.conversation_id as string;
    const session = await get().db.selectFrom('sessions').select('id').where('external_id', '=', conversationId).executeTakeFirstOrThrow();
    return { reply: res.body.reply as string | null, sessionId: session.id, token: res.body.visitor_token as string, conversationId };
  }
  const lastDay = () => `from=${new Date(Date.now() - 86_400_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;

  beforeAll(async () => {
    service = await startTestService(get(), {}, { rateLimits: { tryQuestion: { burst: 1_000 } } });
    a = await seedWorkspace(service, 'Acme');
    b = await seedWorkspace(service, 'Globex');
    expect((await api('PUT', '/v1/webchat', a.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api('GET', '/v1/keys/widget', a.owner)).body.key as string;
  });
  afterAll(async () => {
    await service.stop();
  });

  describe('Add as an answer', () => {
    it("unanswered, an agent replies, the owner adds the reply as the answer: the next visitor who asks is answered with it", async () => {
      const first = await visitorAsks(GIFT_CARDS);
      expect(first.reply).toBe(phrase('dont_know', 'en'));
      const unanswered = await api('GET', `/v1/analytics/unanswered?${lastDay()}`, a.owner);
      const asked = (unanswered.body.questions as { text: string; session_ids: string[] }[]).find((q) => q.text === GIFT_CARDS);
      expect(asked?.session_ids).toEqual([first.sessionId]);

      // An agent holds the conversation and answers the visitor.
      expect((await api('POST', `/v1/sessions/${first.sessionId}/takeover`, a.agent)).status).toBe(200);
      expect((await api('POST', `/v1/sessions/${first.sessionId}/messages`, a.agent, { text: 'Let me look that up for you.' })).status).toBe(201);
      expect((await api('POST', `/v1/sessions/${first.sessionId}/messages`, a.agent, { text: GIFT_CARDS_ANSWER })).status).toBe(201);

      // Without an answer given: the team's last reply after the question.
      const added = await api('POST', '/v1/knowledge/entries/from-conversation', a.owner, { session_id: asked!.session_ids[0], question: asked!.text });
      expect(added.status, added.text).toBe(201);
      expect(added.body).toMatchObject({ type: 'qa', origin: 'dashboard', title: GIFT_CARDS, text: GIFT_CARDS_ANSWER, language: 'en', editable: true });

      const next = await visitorAsks(GIFT_CARDS);
      expect(next.reply).toContain('25, 50 and 100 euro');
      const turn = await get().db.selectFrom('session_turns').select('source').where('session_id', '=', next.sessionId).executeTakeFirstOrThrow();
      expect(turn.source).toBe('knowledge_base');

      // Audited, naming the entry and the conversation, never the customer's words.
      const audit = await api('GET', '/v1/audit', a.owner);
      const entry = (audit.body.entries as { action: string; target: string; user_email: string }[]).find((e) => e.action === 'knowledge_entry_added_from_conversation');
      expect(entry?.target).toBe(`entry ${added.body.id as string} from conversation ${first.sessionId}`);
      expect(entry?.user_email).toMatch(/@/);
    });

    it('an answer typed by the owner is used as it is; the question is stored as text, never as markup', async () => {
      const question = 'Is <b>parking</b> free? <script>alert(1)</script>';
      const chat = await visitorAsks(question);
      const added = await api('POST', '/v1/knowledge/entries/from-conversation', a.admin, { session_id: chat.sessionId, question, answer: 'Yes, behind the shop.' });
      expect(added.status, added.text).toBe(201);
      expect(added.body).toMatchObject({ title: question, text: 'Yes, behind the shop.' });
      expect((await api('GET', `/v1/knowledge/entries/${added.body.id as string}`, a.agent)).body.title).toBe(question);
    });

    it('without an answer and no reply of the team after the question: 422 saying to type one', async () => {
      const chat = await visitorAsks('Can I pay with crypto?');
      const res = await api('POST', '/v1/knowledge/entries/from-conversation', a.owner, { session_id: chat.sessionId, question: 'Can I pay with crypto?' });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'unprocessable', message: expect.stringContaining('type the answer') });
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'answer' })]);
    });

    it('a question longer than an entry\'s question may be is 422 naming the field', async () => {
      const chat = await visitorAsks('Hello?');
      const res = await api('POST', '/v1/knowledge/entries/from-conversation', a.owner, { session_id: chat.sessionId, question: 'why '.repeat(100), answer: 'Because.' });
      expect(res.status).toBe(422);
      expect(res.body.error.details[0].field).toBe('question');
    });
  });

  describe('This page answers it', () => {
    let pageId = '';
    let passageId = '';

    it("a customer's wording added to a passage finds it strongly; taken back, it no longer does", async () => {
      const page = await api('POST', '/v1/knowledge/entries', a.owner, { type: 'page', title: 'Bike rental', text: 'You can rent an e-bike for 29 euro per day, helmet included.', language: 'en' });
      expect(page.status).toBe(201);
      pageId = page.body.id as string;
      const wording = 'Can I borrow a bicycle with a motor?';
      const before = (await api('POST', '/v1/knowledge/try', a.owner, { question: wording, language: 'en' })).body;
      expect(before.confident).toBe(false);

      // The page picker: the passages the search finds for words of the page, with the id a phrasing names.
      const found = await api('GET', `/v1/knowledge/passages?question=${encodeURIComponent('rent an e-bike')}&language=en`, a.owner);
      expect(found.status, found.text).toBe(200);
      expect(found.body.passages[0]).toMatchObject({ entry_id: pageId, title: 'Bike rental', excerpt: expect.stringContaining('29 euro') });
      passageId = found.body.passages[0].id as string;
      const added = await api('POST', '/v1/knowledge/phrasings', a.owner, { passage_id: passageId, text: `  ${wording} ` });
      expect(added.status, added.text).toBe(201);
      expect(added.body).toMatchObject({ entry_id: pageId, passage: 0, text: wording, origin: 'team', language: 'en' });
      // The same wording again adds nothing.
      const again = await api('POST', '/v1/knowledge/phrasings', a.owner, { passage_id: passageId, text: wording.toLowerCase() });
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(added.body.id);

      const after = (await api('POST', '/v1/knowledge/try', a.owner, { question: wording, language: 'en' })).body;
      expect(after.passages[0]).toMatchObject({ id: passageId, entry_id: pageId });
      expect(after.confident).toBe(true);
      expect(after.answer.source).toBe('knowledge_base');
      expect(after.answer.text).toContain('29 euro');

      const listed = await api('GET', `/v1/knowledge/entries/${pageId}/phrasings`, a.agent);
      expect(listed.status).toBe(200);
      expect(listed.body.phrasings).toEqual([added.body]);

      expect((await api('DELETE', `/v1/knowledge/phrasings/${added.body.id as string}`, a.owner)).status).toBe(204);
      expect((await api('GET', `/v1/knowledge/entries/${pageId}/phrasings`, a.owner)).body.phrasings).toEqual([]);
      expect((await api('POST', '/v1/knowledge/try', a.owner, { question: wording, language: 'en' })).body.confident).toBe(false);
    });

    it(`a wording is at most ${MAX_PHRASING_CHARS} characters, and names a passage or an entry, not both`, async () => {
      const long = await api('POST', '/v1/knowledge/phrasings', a.owner, { entry_id: pageId, text: 'a'.repeat(MAX_PHRASING_CHARS + 1) });
      expect(long.status).toBe(422);
      expect(long.body.error.details[0].field).toBe('text');
      const both = await api('POST', '/v1/knowledge/phrasings', a.owner, { entry_id: pageId, passage_id: passageId, text: 'hire a bike' });
      expect(both.status).toBe(422);
      const neither = await api('POST', '/v1/knowledge/phrasings', a.owner, { text: 'hire a bike' });
      expect(neither.status).toBe(422);
    });

    it(`an entry takes at most ${MAX_TEAM_PHRASINGS_PER_DOCUMENT} phrasings from the team`, async () => {
      const entry = (await api('POST', '/v1/knowledge/entries', a.owner, { type: 'qa', title: 'Do you deliver on Sunday?', text: 'No, Monday to Saturday.' })).body;
      for (let i = 0; i < MAX_TEAM_PHRASINGS_PER_DOCUMENT; i++) {
        expect((await api('POST', '/v1/knowledge/phrasings', a.owner, { entry_id: entry.id, text: `sunday delivery ${i}` })).status).toBe(201);
      }
      const over = await api('POST', '/v1/knowledge/phrasings', a.owner, { entry_id: entry.id, text: 'sunday delivery once more' });
      expect(over.status).toBe(422);
      expect(over.body.error.message).toContain(String(MAX_TEAM_PHRASINGS_PER_DOCUMENT));
    });
  });

  describe('who may do it', () => {
    it('an agent reads phrasings but may not add an answer or a phrasing, nor remove one (403)', async () => {
      const chat = await visitorAsks('Do you have a loyalty card?');
      const entry = (await api('POST', '/v1/knowledge/entries', a.owner, { type: 'qa', title: 'Loyalty card?', text: 'Not yet.' })).body;
      const phrasing = (await api('POST', '/v1/knowledge/phrasings', a.owner, { entry_id: entry.id, text: 'points card' })).body;
      expect((await api('POST', '/v1/knowledge/entries/from-conversation', a.agent, { session_id: chat.sessionId, question: 'Do you have a loyalty card?', answer: 'No.' })).status).toBe(403);
      expect((await api('POST', '/v1/knowledge/phrasings', a.agent, { entry_id: entry.id, text: 'stamp card' })).status).toBe(403);
      expect((await api('DELETE', `/v1/knowledge/phrasings/${phrasing.id as string}`, a.agent)).status).toBe(403);
      expect((await api('GET', '/v1/knowledge/passages?question=loyalty', a.agent)).status).toBe(403);
      expect((await api('GET', `/v1/knowledge/entries/${entry.id as string}/phrasings`, a.agent)).body.phrasings).toHaveLength(1);
    });

    it("another workspace's conversation, passage, entry and phrasing are not there (404), and nothing is written", async () => {
      const chat = await visitorAsks('Do you sell spare batteries?');
      const entry = (await api('POST', '/v1/knowledge/entries', a.owner, { type: 'qa', title: 'Spare batteries?', text: 'Yes, 400 euro.' })).body;
      const phrasing = (await api('POST', '/v1/knowledge/phrasings', a.owner, { entry_id: entry.id, text: 'extra accu' })).body;
      const fromB = await api('POST', '/v1/knowledge/entries/from-conversation', b.owner, { session_id: chat.sessionId, question: 'Do you sell spare batteries?', answer: 'No.' });
      expect(fromB.status).toBe(404);
      expect(fromB.body.error.code).toBe('not_found');
      expect((await api('POST', '/v1/knowledge/phrasings', b.owner, { entry_id: entry.id, text: 'battery' })).status).toBe(404);
      expect((await api('POST', '/v1/knowledge/phrasings', b.owner, { passage_id: await passageIdOf(entry.id as string), text: 'battery' })).status).toBe(404);
      expect((await api('GET', `/v1/knowledge/entries/${entry.id as string}/phrasings`, b.owner)).status).toBe(404);
      expect((await api('DELETE', `/v1/knowledge/phrasings/${phrasing.id as string}`, b.owner)).status).toBe(404);
      expect((await api('GET', '/v1/knowledge/entries', b.owner)).body.entries).toEqual([]);
      expect((await api('GET', `/v1/knowledge/entries/${entry.id as string}/phrasings`, a.owner)).body.phrasings).toHaveLength(1);
    });
  });

  /** The first passage of an entry, by the id the search gives it. */
  async function passageIdOf(entryId: string): Promise<string> {
    const row = await get().db.selectFrom('knowledge_chunks').select('id').where('document_id', '=', entryId).where('ordinal', '=', 0).executeTakeFirstOrThrow();
    return row.id;
  }
});
