/**
 * WhatsApp in the customer's language: the language is told from the customer's words (WhatsApp
 * carries none), sent to the integrator as the channel request's `language`, and every sentence the service adds itself
 * (the handoff, the fallback, the text-only notice) is in it. A handoff is announced once: a reply that already says
 * the team will follow up is sent alone; one that does not gets one sentence in the conversation's language.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { phrases } from '../../../src/ai/phrases.ts';
import { describeEachDatabase } from '../../helpers/db.ts';
import { fixture, unixSeconds } from './fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './fixtures/harness.ts';

/** What the integrator answers, by the customer's exact message. */
const ANSWERS: Record<string, Record<string, unknown>> = {
  'Ik wil mijn bestelling annuleren': { reply: 'Ik heb uw verzoek doorgegeven.', handoff: 'forward' },
  'Kunt u mijn bestelling annuleren?': { reply: 'Ik heb het doorgegeven; een collega neemt vandaag nog contact met u op.', handoff: 'forward' },
  'I would like to cancel my order please': { reply: 'I have passed your request on.', handoff: 'forward' },
  'Please cancel my order': { reply: 'Thanks, our team will get back to you shortly.', handoff: 'forward' },
  'Waar is mijn bestelling?': { reply: 'Uw bestelling is onderweg.' },
  'Where is my order?': { reply: 'Your order is on its way.' },
  ok: { reply: 'Prima.', handoff: 'forward' },
  // An empty reply is no answer (protocol §7): the embedded answerer answers, and with no pages it says it does not know.
  'Hebben jullie de blauwe jas in maat M?': { reply: '' },
};

describeEachDatabase('WhatsApp in the customer\'s language', (get) => {
  let h: Harness;
  let customers = 0;
  /** A customer of their own for each test: their conversation starts with no language known. */
  const customer = () => `3161000${String(++customers).padStart(4, '0')}`;
  const text = (waId: string, body: string) =>
    fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: body });
  const bodies = (waId: string) => h.sends().filter((s) => s.body.to === waId).map((s) => (s.body.text as { body: string }).body);
  /** Sends the customer's message and waits for our answer to it: the Graph API body the customer got. */
  async function write(waId: string, body: string): Promise<string> {
    const before = bodies(waId).length;
    expect((await h.post(text(waId, body))).status).toBe(200);
    await until(() => bodies(waId).length > before);
    expect(bodies(waId)).toHaveLength(before + 1);
    return bodies(waId).at(-1)!;
  }
  const languages = (waId: string) => h.channelRequests().filter((r) => r.customer.phone === `+${waId}`).map((r) => r.language);

  beforeAll(async () => {
    h = await startHarness(get(), { answer: (request) => ANSWERS[request.message] });
  });
  afterAll(async () => {
    await h.close();
  });

  describe('a handoff the integrator asks for (handoff forward)', () => {
    it('Dutch, the reply does not say the team follows up: one Dutch sentence is added', async () => {
      const waId = customer();
      expect(await write(waId, 'Ik wil mijn bestelling annuleren')).toBe('Ik heb uw verzoek doorgegeven. Het team neemt contact met u op.');
      expect(languages(waId)).toEqual(['nl']);
    });

    it('Dutch, the reply already says it: the reply alone, said once', async () => {
      const waId = customer();
      expect(await write(waId, 'Kunt u mijn bestelling annuleren?')).toBe('Ik heb het doorgegeven; een collega neemt vandaag nog contact met u op.');
      expect(languages(waId)).toEqual(['nl']);
    });

    it('English, the reply does not say it: one English sentence is added', async () => {
      const waId = customer();
      expect(await write(waId, 'I would like to cancel my order please')).toBe('I have passed your request on. The team will follow up with you.');
      expect(languages(waId)).toEqual(['en']);
    });

    it('English, the reply already says it: the reply alone, said once', async () => {
      const waId = customer();
      expect(await write(waId, 'Please cancel my order')).toBe('Thanks, our team will get back to you shortly.');
      expect(languages(waId)).toEqual(['en']);
    });
  });

  describe("the conversation's language", () => {
    it('a message too short to tell keeps the language the conversation had', async () => {
      const waId = customer();
      expect(await write(waId, 'Waar is mijn bestelling?')).toBe('Uw bestelling is onderweg.');
      expect(await write(waId, 'ok')).toBe('Prima. Het team neemt contact met u op.');
      expect(languages(waId)).toEqual(['nl', 'nl']);
    });

    it('English when nothing better is known', async () => {
      const waId = customer();
      expect(await write(waId, 'ok')).toBe('Prima. The team will follow up with you.');
      expect(languages(waId)).toEqual(['en']);
    });

    it('follows the customer when they switch language', async () => {
      const waId = customer();
      expect(await write(waId, 'Where is my order?')).toBe('Your order is on its way.');
      expect(await write(waId, 'Ik wil mijn bestelling annuleren')).toBe('Ik heb uw verzoek doorgegeven. Het team neemt contact met u op.');
      expect(languages(waId)).toEqual(['en', 'nl']);
    });

    it("the fallback and the text-only notice are in the customer's language", async () => {
      const waId = customer();
      expect(await write(waId, 'Hebben jullie de blauwe jas in maat M?')).toBe(phrases.nl.dont_know);
      await h.service.runtime.settled();
      const before = bodies(waId).length;
      await h.post(fixture('image-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds() }));
      await until(() => bodies(waId).length > before);
      expect(bodies(waId).at(-1)).toBe(phrases.nl.text_only);
    });
  });
});
