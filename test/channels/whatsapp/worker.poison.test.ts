/**
 * One bad message never poisons its neighbours: a signed delivery with two messages from two
 * customers, one holding U+0000 and a lone surrogate (as Meta writes them, `\u0000` and `\ud800` escapes), is
 * acknowledged and both customers are answered; the bad text reaches the integrator with U+FFFD in their place.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { unixSeconds } from './fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './fixtures/harness.ts';

describeEachDatabase('WhatsApp: a bad message in a delivery', (get) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(get());
  });
  afterAll(async () => {
    await h.close();
  });

  it('both customers of one delivery are answered when one message holds U+0000 and a lone surrogate', async () => {
    const good = { from: '31600000001', id: wamid(), body: 'Where is order 1?' };
    const bad = { from: '31600000002', id: wamid(), body: 'order\\u0000 2 \\ud800?' };
    const message = (m: typeof good) => `{"from":"${m.from}","id":"${m.id}","timestamp":"${unixSeconds()}","text":{"body":"${m.body}"},"type":"text"}`;
    const body = Buffer.from(
      `{"object":"whatsapp_business_account","entry":[{"id":"1","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"${PHONE_NUMBER_ID}"},` +
        `"contacts":[{"profile":{"name":"Ann"},"wa_id":"${good.from}"},{"profile":{"name":"Bo\\u0000b"},"wa_id":"${bad.from}"}],` +
        `"messages":[${message(bad)},${message(good)}]},"field":"messages"}]}]}`,
      'latin1',
    );
    expect((await h.post(body)).status).toBe(200);

    await until(() => h.sends().length >= 2, 10_000);
    expect(new Set(h.sends().map((s) => s.body.to))).toEqual(new Set([good.from, bad.from]));
    const seen = h.channelRequests().map((r) => r.message).sort();
    expect(seen).toEqual(['Where is order 1?', 'order\uFFFD 2 \uFFFD?']);

    const events = await get().db.selectFrom('whatsapp_webhook_events').select(['outcome']).execute();
    expect(events.map((e) => e.outcome)).toEqual(['processed']);
    const stored = await get().db.selectFrom('whatsapp_inbound_messages').select(['profile_name', 'state']).where('wa_id', '=', bad.from).executeTakeFirstOrThrow();
    expect(stored).toEqual({ profile_name: 'Bo\uFFFDb', state: 'done' });
  });
});
