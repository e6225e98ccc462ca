/**
 * Asking for a person works the same on every channel (src/text/person-request.ts; docs/architecture.md, "Decisions
 * worth knowing"): the phrases that ask for one, and a yes right after the bot offered the team, in English and Dutch,
 * on WhatsApp (signed webhooks, a Graph stand-in), the web chat (HTTP) and the phone (a real ConversationRelay client).
 * The handoff goes through the one handoff rule: on the phone a person is connected while the team is available; on
 * WhatsApp and the web chat the team follows up and gets a notification. The integrator answers nothing, so the bot's
 * own answer is the fallback sentence that offers the team.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { phrase } from '../../src/ai/phrases.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { BRIDGE_TOKEN, Caller, NUMBER, type Frame } from '../helpers/phone-caller.ts';
import { fixture, unixSeconds } from './whatsapp/fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './whatsapp/fixtures/harness.ts';

const SHOP = 'https://shop.example';
const OPENING_HOURS = 'When are you open?';
const HOURS = 'We are open from 9 to 5.';

describeEachDatabase('asking for a person, on every channel', (get) => {
  let h: Harness;
  let widgetKey: string;
  let customers = 0;
  let calls = 0;
  const callers: Caller[] = [];

  beforeAll(async () => {
    // The integrator answers the opening hours only (an empty reply is no answer): otherwise the bot's own answer is the
    // fallback, which offers the team.
    h = await startHarness(get(), { answer: (r) => ({ reply: r.message === OPENING_HOURS ? HOURS : '' }), env: { BRIDGE_TOKEN } });
    const { owner } = h.workspace;
    expect((await h.service.api('PUT', '/v1/phone', { token: owner, body: { numbers: [NUMBER], transfer_number: '+31207654321' } })).status).toBe(200);
    expect((await h.service.api('PUT', '/v1/team', { token: owner, body: { available: true } })).status).toBe(200);
    expect((await h.service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: [SHOP] } })).status).toBe(200);
    widgetKey = (await h.service.api('GET', '/v1/keys/widget', { token: owner })).body.key as string;
  });
  afterEach(() => {
    for (const c of callers.splice(0)) c.ws.terminate();
  });
  afterAll(async () => {
    await h.close();
  });

  /** The team's notifications that quote `words`. */
  async function notificationsQuoting(words: string): Promise<{ kind: string; message: string }[]> {
    const res = await h.service.api('GET', '/v1/notifications', { token: h.workspace.owner });
    return (res.body.notifications as { kind: string; message: string }[]).filter((n) => n.message.includes(words));
  }
  /** The messages the integrator was sent (the phone's manifest GETs left out). */
  const askedIntegrator = () => h.integrator.requests.filter((r) => r.method === 'POST').map((r) => (JSON.parse(r.body.toString('utf8')) as { message: string }).message);

  describe('WhatsApp', () => {
    const newCustomer = () => `3161300${String(++customers).padStart(4, '0')}`;
    async function write(waId: string, body: string): Promise<string> {
      const bodies = () => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);
      const before = bodies().length;
      await h.post(fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: body }));
      await until(() => bodies().length > before);
      return bodies().at(-1)!;
    }

    it.each([
      ['en', 'Can I speak to a real person please?'],
      ['nl', 'Goedemiddag, ik wil graag een medewerker spreken over mijn bestelling'],
    ])('%s: %j is handed to the team at once: the waiting sentence, a notification, no integrator', async (language, words) => {
      const waId = newCustomer();
      // The team is available: a colleague answers here (the conversation waits in the inbox).
      expect(await write(waId, words)).toBe(phrase('handoff_waiting', language));
      expect(await notificationsQuoting(words)).toEqual([expect.objectContaining({ kind: 'human_followup', message: `The customer asked for a person. ${words}` })]);
      expect(askedIntegrator()).not.toContain(words);
    });

    it.each([
      ['en', 'Do you repair electric bicycles as well?', 'Yes please', 'no'],
      ['nl', 'Repareren jullie ook elektrische fietsen?', 'ja graag', 'nee'],
    ])('%s: yes to "shall I connect you with the team?" hands over; no does not', async (language, question, yes, no) => {
      const waId = newCustomer();
      expect(await write(waId, question)).toBe(phrase('dont_know', language));
      // No: not a handoff; the bot answers it like any message (and, knowing nothing, offers the team again).
      expect(await write(waId, no)).toBe(phrase('dont_know', language));
      expect(await write(waId, yes)).toBe(phrase('handoff_waiting', language));
      expect(await notificationsQuoting(yes)).toHaveLength(1);
      expect(askedIntegrator()).toContain(no);
      expect(askedIntegrator()).not.toContain(yes);
    });

    it('a yes that is not the answer to an offer is an ordinary message', async () => {
      const waId = newCustomer();
      expect(await write(waId, OPENING_HOURS)).toBe(HOURS);
      const okay = 'okay';
      expect(await write(waId, okay)).toBe(phrase('dont_know', 'en'));
      expect(askedIntegrator()).toContain(okay);
      expect(await notificationsQuoting(okay)).toEqual([]);
    });
  });

  describe('web chat', () => {
    /** The visitor token of the conversation started last, which its next messages carry. */
    let visitorToken = '';
    const widget = async (path: string, body: unknown) => {
      const res = await h.service.api('POST', path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, 'x-visitor-token': visitorToken }, body });
      if (typeof res.body?.visitor_token === 'string') visitorToken = res.body.visitor_token;
      return res;
    };
    const escalations = async (conversationId: string) =>
      (await get().db.selectFrom('webhook_events').select(['event', 'payload']).where('workspace_id', '=', h.workspace.workspaceId).orderBy('created_at').execute())
        .filter((e) => e.event === 'escalation' && (e.payload as { conversation_id: string }).conversation_id === conversationId)
        .map((e) => e.payload as { type: string; visitor_message: string });

    it.each([
      ['en', 'Do you repair electric bicycles as well?', 'Yes please'],
      ['nl', 'Repareren jullie ook elektrische fietsen?', 'ja graag'],
    ])('%s: yes to the offer of the team hands over and tells the team (escalation detected)', async (language, question, yes) => {
      const started = await widget('/v1/webchat/conversations', { visitor_message: question, page_url: `${SHOP}/` });
      expect(started.body.reply).toBe(phrase('dont_know', language));
      const id = started.body.conversation_id as string;
      const res = await widget(`/v1/webchat/conversations/${id}/messages`, { message: yes });
      expect(res.body.reply).toBe(phrase('handoff_waiting', language));
      expect(await escalations(id)).toEqual([expect.objectContaining({ type: 'detected', visitor_message: yes })]);
    });

    it('no to the offer is not a handoff, and nothing is escalated', async () => {
      const started = await widget('/v1/webchat/conversations', { visitor_message: 'Repareren jullie ook elektrische fietsen?', page_url: `${SHOP}/` });
      const id = started.body.conversation_id as string;
      const res = await widget(`/v1/webchat/conversations/${id}/messages`, { message: 'nee' });
      expect(res.body.reply).toBe(phrase('dont_know', 'nl'));
      expect(await escalations(id)).toEqual([]);
    });

    it('"Can I speak to a real person please?" is recognised (escalation detected, the team sentence)', async () => {
      const words = 'Can I speak to a real person please?';
      const started = await widget('/v1/webchat/conversations', { visitor_message: 'Do you deliver on Sundays?', page_url: `${SHOP}/` });
      const id = started.body.conversation_id as string;
      const res = await widget(`/v1/webchat/conversations/${id}/messages`, { message: words });
      expect(res.body.reply).toBe(phrase('handoff_waiting', 'en'));
      expect(await escalations(id)).toEqual([expect.objectContaining({ type: 'detected', visitor_message: words })]);
    });
  });

  describe('phone (the team is available: a person is connected)', () => {
    async function call(): Promise<Caller> {
      const caller = await Caller.connect(h.service);
      callers.push(caller);
      caller.setup(`CA-person-${Date.now()}-${calls++}`);
      return caller;
    }
    /** The sentence the caller hears, then the end frame that hands the call to a person. */
    async function handedOver(caller: Caller): Promise<{ heard: string; end: Frame }> {
      const heard = (await caller.answer()).token as string;
      const end = await caller.next((f) => f.type === 'end');
      return { heard, end };
    }

    it.each([
      ['en-US', 'en', 'Can I speak to a real person please?'],
      ['nl-NL', 'nl', 'Ik wil iemand spreken'],
    ])('%s (%s): %j connects a person at once (requested_by speech), without the integrator', async (lang, language, words) => {
      const caller = await call();
      caller.say(words, true, lang);
      const { heard, end } = await handedOver(caller);
      expect(heard).toBe(phrase('handoff_human', language));
      expect(JSON.parse(end.handoffData as string)).toMatchObject({ reason: 'human', requested_by: 'speech' });
      expect(askedIntegrator()).not.toContain(words);
    });

    it.each([
      ['en-US', 'en', 'Do you repair electric bicycles as well?', 'yes please'],
      ['nl-NL', 'nl', 'Repareren jullie ook elektrische fietsen?', 'ja graag'],
    ])('%s: yes to "shall I connect you with the team?" connects a person', async (lang, language, question, yes) => {
      const caller = await call();
      caller.say(question, true, lang);
      expect((await caller.answer()).token).toBe(phrase('dont_know', language));
      caller.say(yes, true, lang);
      const { heard, end } = await handedOver(caller);
      expect(heard).toBe(phrase('handoff_human', language));
      expect(JSON.parse(end.handoffData as string)).toMatchObject({ reason: 'human', requested_by: 'speech' });
    });

    it.each([
      ['en-US', 'en', 'Do you repair electric bicycles as well?', 'no'],
      ['nl-NL', 'nl', 'Repareren jullie ook elektrische fietsen?', 'nee'],
    ])('%s: no to the offer keeps the call with the bot', async (lang, language, question, no) => {
      const caller = await call();
      caller.say(question, true, lang);
      expect((await caller.answer()).token).toBe(phrase('dont_know', language));
      caller.say(no, true, lang);
      expect((await caller.answer()).token).toBe(phrase('dont_know', language));
      expect(askedIntegrator()).toContain(no);
      caller.say(OPENING_HOURS, true, lang);
      expect((await caller.answer()).token).toBe(HOURS);
      expect(caller.frames.filter((f) => f.type === 'end')).toEqual([]);
    });

    it('a yes that is not the answer to an offer is an ordinary message', async () => {
      const caller = await call();
      caller.say(OPENING_HOURS);
      expect((await caller.answer()).token).toBe(HOURS);
      caller.say('yes');
      expect((await caller.answer()).token).toBe(phrase('dont_know', 'en'));
      caller.say(OPENING_HOURS);
      expect((await caller.answer()).token).toBe(HOURS);
      expect(caller.frames.filter((f) => f.type === 'end')).toEqual([]);
    });
  });
});
