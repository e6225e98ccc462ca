/** Two service instances on one database: every message is processed by one of them, exactly once. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { fixture, unixSeconds } from './fixtures/meta.ts';
import { APP_SECRET, MASTER_KEY, PHONE_NUMBER_ID, startHarness, TEST_WORKER, until, VERIFY_TOKEN, wamid, type Harness } from './fixtures/harness.ts';

describeEachDatabase('WhatsApp with two workers', (get) => {
  let h: Harness;
  let second: TestService;

  beforeAll(async () => {
    h = await startHarness(get());
    second = await startTestService(
      get(),
      { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, WHATSAPP_GRAPH_URL: `${h.graph.origin}/v21.0`, MASTER_KEY },
      { whatsapp: { worker: TEST_WORKER } },
    );
  });
  afterAll(async () => {
    await second.stop();
    await h.close();
  });

  it('answers each of 30 messages once, whichever instance received it', async () => {
    const messages = Array.from({ length: 30 }, (_, i) => ({ waId: `3161200${String(i).padStart(4, '0')}`, id: wamid(), text: `question ${i}` }));
    const results = await Promise.all(
      messages.map((m, i) => {
        const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: m.waId, MESSAGE_ID: m.id, TIMESTAMP: unixSeconds(), BODY: m.text });
        // Alternate instances; a third of the messages is delivered to both (Meta's retry landing elsewhere).
        const first = h.post(body, undefined, i % 2 === 0 ? h.service : second);
        return i % 3 === 0 ? Promise.all([first, h.post(body, undefined, i % 2 === 0 ? second : h.service)]).then(([a]) => a) : first;
      }),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);

    const db = h.service.database.db;
    await until(async () => {
      const rows = await db.selectFrom('whatsapp_outbound_messages').select(['status']).execute();
      return rows.length === messages.length && rows.every((r) => r.status === 'accepted') ? rows : undefined;
    }, 20_000);
    await Promise.all([h.service.whatsapp.worker.idle(), second.whatsapp.worker.idle()]);

    const sends = h.sends();
    expect(sends).toHaveLength(messages.length);
    expect(new Set(sends.map((s) => s.body.to)).size).toBe(messages.length);
    expect(h.channelRequests()).toHaveLength(messages.length);
    const inbound = await db.selectFrom('whatsapp_inbound_messages').select(['state', 'attempts']).execute();
    expect(inbound).toHaveLength(messages.length);
    expect(inbound.every((r) => r.state === 'done' && r.attempts === 1)).toBe(true);
    // Both instances read events (each one wakes on its own inserts).
    const events = await db.selectFrom('whatsapp_webhook_events').select(['outcome']).execute();
    expect(events.length).toBe(messages.length + 10);
    expect(events.every((e) => e.outcome === 'processed')).toBe(true);
  });

  it('processes events another instance stored but never processed (it stopped), when the next one starts', async () => {
    const env = { WHATSAPP_APP_SECRET: APP_SECRET, WHATSAPP_VERIFY_TOKEN: VERIFY_TOKEN, WHATSAPP_GRAPH_URL: `${h.graph.origin}/v21.0`, MASTER_KEY };
    await second.stop();
    const paused = await startTestService(get(), env, { whatsapp: { processing: false } });
    const customer = '31699990000';
    const id = wamid();
    const body = fixture('text-message', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: id, TIMESTAMP: unixSeconds(), BODY: 'stored while nobody processed' });
    expect((await h.post(body, undefined, paused)).status).toBe(200);
    await paused.stop();
    // The first instance is still running: its backstop poll finds the stored body.
    await until(() => h.sends().find((s) => s.body.to === customer));
    second = await startTestService(get(), env, { whatsapp: { worker: TEST_WORKER } });
  });
});
