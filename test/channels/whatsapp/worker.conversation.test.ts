/** A customer writing on WhatsApp: the bot link, the reply, sessions, non-text messages, duplicates, non-ASCII. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { phrases } from '../../../src/ai/phrases.ts';
import { fixture, unixSeconds } from './fixtures/meta.ts';
import { ACCESS_TOKEN, PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './fixtures/harness.ts';

describeEachDatabase('WhatsApp conversations', (get) => {
  let h: Harness;
  const inbound = (messageId: string) =>
    h.service.database.db.selectFrom('whatsapp_inbound_messages').selectAll().where('message_id', '=', messageId).executeTakeFirst();
  const done = (messageId: string) => until(async () => {
    const row = await inbound(messageId);
    return row?.state === 'done' ? row : undefined;
  });
  const text = (waId: string, messageId: string, body: string, at = new Date()) =>
    fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: messageId, TIMESTAMP: unixSeconds(at), BODY: body });
  const sendsTo = (waId: string) => h.sends().filter((s) => s.body.to === waId);

  beforeAll(async () => {
    h = await startHarness(get());
  });
  afterAll(async () => {
    await h.close();
  });

  describe('a text message', () => {
    const waId = '31612345678';

    it('is answered: the reply is POSTed to the Graph API with the workspace token and the documented body', async () => {
      const id = wamid();
      expect((await h.post(text(waId, id, 'Where is my order 1234?'))).status).toBe(200);
      await until(() => sendsTo(waId).length === 1);
      const [send] = sendsTo(waId);
      expect(send!.url).toBe(`/v21.0/${PHONE_NUMBER_ID}/messages`);
      expect(send!.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
      expect(send!.body).toEqual({ messaging_product: 'whatsapp', to: waId, type: 'text', text: { body: 'Answer to: Where is my order 1234?', preview_url: false } });
      const row = await done(id);
      expect(row.outcome).toBe('reply');
      const out = await until(async () =>
        h.service.database.db.selectFrom('whatsapp_outbound_messages').selectAll().where('inbound_id', '=', row.id).where('status', '=', 'accepted').executeTakeFirst(),
      );
      // messages[0].id of the Graph answer is kept, so status webhooks find the message.
      expect(out.message_id).toMatch(/^wamid\.OUT/);
    });

    it("reaches the integrator as channel 'whatsapp' with customer.phone in E.164, and the session_id is stable", async () => {
      const second = wamid();
      expect((await h.post(text(waId, second, 'And order 5678?'))).status).toBe(200);
      await done(second);
      const seen = h.channelRequests().filter((r) => r.customer.phone === `+${waId}`);
      expect(seen.map((r) => r.message)).toEqual(['Where is my order 1234?', 'And order 5678?']);
      expect(seen[0]).toMatchObject({ channel: 'whatsapp', customer: { phone: '+31612345678' } });
      expect(seen[1]!.session_id).toBe(seen[0]!.session_id);
      // The session id is ours (a conversation id), not the phone number.
      expect(seen[0]!.session_id).not.toContain(waId);
      // The message is marked done and the turn's session row written in separate commits (the turn's is grouped):
      // through a transaction pooler the read may come between them, so it waits for the second turn.
      const session = await until(async () => {
        const row = await h.service.database.db.selectFrom('sessions').selectAll().where('external_id', '=', seen[0]!.session_id).executeTakeFirstOrThrow();
        return row.turn_count >= 2 ? row : undefined;
      });
      expect(session).toMatchObject({ channel: 'whatsapp', customer_phone: '+31612345678', turn_count: 2 });
    });

    it('starts a new session after 24 hours without messages (the rollover)', async () => {
      const customer = '4915112345678';
      const first = new Date(Date.now() - 26 * 60 * 60_000);
      const a = wamid();
      const b = wamid();
      const c = wamid();
      await h.post(text(customer, a, 'Hello yesterday', first));
      await done(a);
      await h.post(text(customer, b, 'Hello again', new Date(first.getTime() + 60 * 60_000)));
      await done(b);
      await h.post(text(customer, c, 'Hello today'));
      await done(c);
      const ids = h.channelRequests().filter((r) => r.customer.phone === `+${customer}`).map((r) => r.session_id);
      expect(ids).toHaveLength(3);
      expect(ids[1]).toBe(ids[0]);
      expect(ids[2]).not.toBe(ids[1]);
      const conversation = await h.service.database.db.selectFrom('whatsapp_conversations').selectAll().where('wa_id', '=', customer).executeTakeFirstOrThrow();
      expect(conversation).toMatchObject({ external_id: ids[2], sequence: 2 });
    });

    it('is answered once when Meta delivers it twice', async () => {
      const customer = '447700900123';
      const id = wamid();
      const body = text(customer, id, 'Do you ship to the UK?');
      const [first, second] = await Promise.all([h.post(body), h.post(body)]);
      expect([first.status, second.status]).toEqual([200, 200]);
      await done(id);
      // And once more later, as Meta's retries come hours apart.
      expect((await h.post(body)).status).toBe(200);
      await h.service.whatsapp.worker.idle();
      await until(() => sendsTo(customer).length >= 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(sendsTo(customer)).toHaveLength(1);
      expect(h.channelRequests().filter((r) => r.customer.phone === `+${customer}`)).toHaveLength(1);
      const rows = await h.service.database.db.selectFrom('whatsapp_inbound_messages').select('id').where('message_id', '=', id).execute();
      expect(rows).toHaveLength(1);
    });
  });

  describe('a handoff', () => {
    it("is the runtime's sentence in the reply, and a notification for the team; nothing else happens on WhatsApp", async () => {
      const customer = '31655500000';
      const id = wamid();
      // The integrator's own handoff (a customer asking for a person in words is test/channels/person-request.test.ts).
      await h.post(text(customer, id, 'My parcel is damaged, please pass this on'));
      await done(id);
      await until(() => sendsTo(customer).length === 1);
      expect(sendsTo(customer)[0]!.body).toMatchObject({ text: { body: 'I have passed this on. The team will follow up with you.' } });
      const notifications = await h.service.database.db.selectFrom('notifications').selectAll().where('workspace_id', '=', h.workspace.workspaceId).execute();
      expect(notifications.some((n) => n.kind === 'forward')).toBe(true);
    });
  });

  describe('non-ASCII', () => {
    it('verifies a body Meta wrote with \\u escapes, and reads the name and the text correctly', async () => {
      const customer = '34600111222';
      const id = wamid();
      const body = fixture('text-message-non-ascii', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: id, TIMESTAMP: unixSeconds() });
      expect(body.toString('latin1')).toContain('Zo\\u00eb');
      expect((await h.post(body)).status).toBe(200);
      await done(id);
      const request = h.channelRequests().find((r) => r.customer.phone === `+${customer}`);
      expect(request?.message).toBe('Café open? ¿Dónde está mi pedido? 😊 https://shop.example/orders/1234');
      // The profile name is not a field of the channel request (protocol §2.1); it is kept on the conversation.
      expect(JSON.stringify(request)).not.toContain('Zoë');
      const conversation = await h.service.database.db.selectFrom('whatsapp_conversations').selectAll().where('wa_id', '=', customer).executeTakeFirstOrThrow();
      expect(conversation.profile_name).toBe('Zoë Østergaard-Muñoz 李雷 🌻');
      await until(() => sendsTo(customer).length === 1);
    });
  });

  describe('messages that are not text', () => {
    it('an image gets the documented text-only answer, without calling the bot link', async () => {
      const customer = '33612345678';
      const requestsBefore = h.channelRequests().length;
      const id = wamid();
      expect((await h.post(fixture('image-message', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: id, TIMESTAMP: unixSeconds() }))).status).toBe(200);
      expect((await done(id)).outcome).toBe('notice');
      await until(() => sendsTo(customer).length === 1);
      expect(sendsTo(customer)[0]!.body).toMatchObject({ type: 'text', text: { body: phrases.en.text_only, preview_url: false } });
      expect(h.channelRequests()).toHaveLength(requestsBefore);
    });

    it('a second picture right after gets no second notice; a reaction gets no answer at all', async () => {
      const customer = '33612345678';
      const again = wamid();
      await h.post(fixture('image-message', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: again, TIMESTAMP: unixSeconds() }));
      expect((await done(again)).outcome).toBe('notice_recent');
      const reaction = wamid();
      await h.post(fixture('reaction-message', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: reaction, TIMESTAMP: unixSeconds() }));
      expect((await done(reaction)).outcome).toBe('silent');
      await h.service.whatsapp.worker.idle();
      expect(sendsTo(customer)).toHaveLength(1);
    });

    it("the notice is in the conversation's language when the session has one", async () => {
      const customer = '31698765432';
      const first = wamid();
      await h.post(text(customer, first, 'Hallo'));
      const row = await done(first);
      await h.service.runtime.settled();
      await h.service.database.db.updateTable('sessions').set({ language: 'nl' }).where('external_id', '=', row.session_external_id!).execute();
      const image = wamid();
      await h.post(fixture('image-message', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: image, TIMESTAMP: unixSeconds() }));
      await done(image);
      await until(() => sendsTo(customer).length === 2);
      expect(sendsTo(customer)[1]!.body).toMatchObject({ text: { body: phrases.nl.text_only } });
    });
  });
});
