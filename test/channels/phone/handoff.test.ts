/**
 * Handoffs on the phone are said once, in the caller's language: a real `ws` client plays
 * ConversationRelay, the integrator is a real HTTPS server on loopback (test CA) that answers with a handoff. A reply
 * that already announces the handoff is spoken alone; one that does not gets one sentence in the caller's language.
 * The caller's language is the one the bridge reports with each prompt.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller } from '../../helpers/phone-caller.ts';
import { seedWorkspace, startTestService, type TestService } from '../../helpers/service.ts';

/**
 * What the integrator answers, by the caller's exact words. None of them asks for a person in words: such a request
 * is the customer's own and goes straight to the handoff rule without the integrator (test/channels/person-request.test.ts).
 */
const ANSWERS: Record<string, { reply: string; handoff: 'human' | 'forward' }> = {
  // A person now (the team is available in these tests).
  'Ik heb een klacht over mijn bezorging': { reply: 'Ik verbind je door met een collega.', handoff: 'human' },
  'Mijn pakket is beschadigd': { reply: 'Natuurlijk.', handoff: 'human' },
  'I have a complaint about my delivery': { reply: "I'm putting you through to a colleague now.", handoff: 'human' },
  'My parcel arrived damaged': { reply: 'Of course.', handoff: 'human' },
  // The team follows up.
  'Ik wil mijn bestelling annuleren': { reply: 'Een collega neemt morgen contact met u op.', handoff: 'forward' },
  'Kunt u mijn bestelling annuleren?': { reply: 'Ik heb het doorgegeven.', handoff: 'forward' },
  'I would like to cancel my order please': { reply: 'Our team will call you back tomorrow.', handoff: 'forward' },
  'Please cancel my order': { reply: 'I have passed it on.', handoff: 'forward' },
};

describeEachDatabase('phone handoffs, said once in the caller\'s language', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let owner: string;
  const callers: Caller[] = [];
  let seq = 0;

  const turnCount = async (sid: string) =>
    (await service.database.db.selectFrom('sessions').select('turn_count').where('external_id', '=', sid).executeTakeFirst())?.turn_count ?? 0;

  /** A call whose first words are `words`, heard in `lang`; the frames that come back are read by the test. */
  async function ask(words: string, lang: 'nl-NL' | 'en-US'): Promise<{ caller: Caller; sid: string }> {
    const caller = await Caller.connect(service);
    callers.push(caller);
    const sid = `CA-handoff-${Date.now()}-${seq++}`;
    caller.setup(sid);
    caller.say(words, true, lang);
    return { caller, sid };
  }

  /** After the turn is written, nothing else was said on the call. */
  async function nothingMoreSaid(caller: Caller, sid: string): Promise<void> {
    const deadline = Date.now() + 5_000;
    while ((await turnCount(sid)) < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(await turnCount(sid)).toBe(1);
    expect(caller.frames.filter((f) => f.type === 'text')).toEqual([]);
  }

  beforeAll(async () => {
    integrator = await startHttpsServer((req, res, body) => {
      if (req.method === 'GET') return sendJson(res, 200, { tools: [] });
      const message = JSON.parse(body.toString()).message as string;
      sendJson(res, 200, ANSWERS[message] ?? { reply: `Answer to: ${message}` });
    });
    // No filler: a turn's frames are the answer alone.
    service = await startTestService(get(), { BRIDGE_TOKEN }, { phone: { fillerMs: 5_000 } });
    ({ owner } = await seedWorkspace(service));
    await service.api('PUT', '/v1/integration', { token: owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
    const put = await service.api('PUT', '/v1/phone', { token: owner, body: { numbers: ['+31 20 123 4567'], transfer_number: '+31 20 765 4321', language: 'en-US' } });
    expect(put.status).toBe(200);
    expect((await service.api('PUT', '/v1/team', { token: owner, body: { available: true } })).status).toBe(200);
  });
  afterEach(() => {
    for (const c of callers.splice(0)) c.ws.terminate();
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });

  describe('a person now (handoff human, the team available)', () => {
    it('Dutch, the reply already says it: spoken alone, once, then the call goes to the team', async () => {
      const { caller } = await ask('Ik heb een klacht over mijn bezorging', 'nl-NL');
      expect(await caller.next()).toEqual({ type: 'text', token: 'Ik verbind je door met een collega.', last: true, lang: 'nl-NL' });
      expect(await caller.next()).toMatchObject({ type: 'end' });
    });

    it('Dutch, the reply does not say it: one Dutch sentence is added', async () => {
      const { caller } = await ask('Mijn pakket is beschadigd', 'nl-NL');
      expect(await caller.next()).toEqual({ type: 'text', token: 'Natuurlijk. Ik verbind u door met een collega.', last: true, lang: 'nl-NL' });
      expect(await caller.next()).toMatchObject({ type: 'end' });
    });

    it('English, the reply already says it: spoken alone, once', async () => {
      const { caller } = await ask('I have a complaint about my delivery', 'en-US');
      expect(await caller.next()).toEqual({ type: 'text', token: "I'm putting you through to a colleague now.", last: true, lang: 'en-US' });
      expect(await caller.next()).toMatchObject({ type: 'end' });
    });

    it('English, the reply does not say it: one English sentence is added', async () => {
      const { caller } = await ask('My parcel arrived damaged', 'en-US');
      expect(await caller.next()).toEqual({ type: 'text', token: "Of course. I'll connect you with a colleague.", last: true, lang: 'en-US' });
      expect(await caller.next()).toMatchObject({ type: 'end' });
    });
  });

  describe('the team follows up (handoff forward)', () => {
    it('Dutch, the reply already says it: spoken alone, once', async () => {
      const { caller, sid } = await ask('Ik wil mijn bestelling annuleren', 'nl-NL');
      expect(await caller.next()).toEqual({ type: 'text', token: 'Een collega neemt morgen contact met u op.', last: true, lang: 'nl-NL' });
      await nothingMoreSaid(caller, sid);
    });

    it('Dutch, the reply does not say it: one Dutch sentence is added', async () => {
      const { caller, sid } = await ask('Kunt u mijn bestelling annuleren?', 'nl-NL');
      expect(await caller.next()).toEqual({ type: 'text', token: 'Ik heb het doorgegeven. Het team neemt contact met u op.', last: true, lang: 'nl-NL' });
      await nothingMoreSaid(caller, sid);
    });

    it('English, the reply already says it: spoken alone, once', async () => {
      const { caller, sid } = await ask('I would like to cancel my order please', 'en-US');
      expect(await caller.next()).toEqual({ type: 'text', token: 'Our team will call you back tomorrow.', last: true, lang: 'en-US' });
      await nothingMoreSaid(caller, sid);
    });

    it('English, the reply does not say it: one English sentence is added', async () => {
      const { caller, sid } = await ask('Please cancel my order', 'en-US');
      expect(await caller.next()).toEqual({ type: 'text', token: 'I have passed it on. The team will follow up with you.', last: true, lang: 'en-US' });
      await nothingMoreSaid(caller, sid);
    });
  });
});
