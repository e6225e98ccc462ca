/** Our replies: retries on 5xx, 131047 recorded and not retried, delivery statuses that never go back. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { sendJson } from '../../helpers/https-server.ts';
import { fixture, unixSeconds } from './fixtures/meta.ts';
import { PHONE_NUMBER_ID, startHarness, until, wamid, type Harness } from './fixtures/harness.ts';

describeEachDatabase('WhatsApp replies', (get) => {
  let h: Harness;
  const text = (waId: string, body: string) => fixture('text-message', { PHONE_NUMBER_ID, WA_ID: waId, MESSAGE_ID: wamid(), TIMESTAMP: unixSeconds(), BODY: body });
  const sendsTo = (waId: string) => h.sends().filter((s) => s.body.to === waId);
  const outbound = (waId: string) =>
    h.service.database.db.selectFrom('whatsapp_outbound_messages').selectAll().where('wa_id', '=', waId).orderBy('created_at').execute();
  const status = (messageId: string, value: string, at: Date) =>
    fixture('status', { PHONE_NUMBER_ID, WA_ID: '0', MESSAGE_ID: messageId, STATUS: value, TIMESTAMP: unixSeconds(at) });

  beforeAll(async () => {
    h = await startHarness(get());
  });
  afterAll(async () => {
    await h.close();
  });

  describe('delivery statuses', () => {
    it('are recorded per message and never go back: sent → read → delivered stays read', async () => {
      const customer = '31610000001';
      await h.post(text(customer, 'status please'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'accepted' ? rows : undefined;
      });
      const messageId = row!.message_id!;
      const t = Date.now();
      for (const [value, offset] of [['sent', 0], ['read', 2_000], ['delivered', 1_000]] as const) {
        expect((await h.post(status(messageId, value, new Date(t + offset)))).status).toBe(200);
        await h.service.whatsapp.worker.idle();
      }
      const [after] = await outbound(customer);
      expect(after).toMatchObject({ status: 'read', status_rank: 5 });
      // Each status keeps its own time, even one that arrived late.
      expect(after!.sent_at).not.toBeNull();
      expect(after!.read_at).not.toBeNull();
      expect(new Date(after!.delivered_at!).getTime()).toBe(Math.floor((t + 1_000) / 1000) * 1000);
    });

    it('a failed status records Meta\'s error code (131047) on the message', async () => {
      const customer = '31610000002';
      await h.post(text(customer, 'will fail later'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'accepted' ? rows : undefined;
      });
      await h.post(fixture('status-failed', { PHONE_NUMBER_ID, WA_ID: customer, MESSAGE_ID: row!.message_id!, TIMESTAMP: unixSeconds() }));
      await h.service.whatsapp.worker.idle();
      const [after] = await outbound(customer);
      expect(after).toMatchObject({ status: 'failed', error_code: 131047, error_detail: 'Re-engagement message' });
      expect(after!.failed_at).not.toBeNull();
    });

    it('a status for a message we never sent is kept and dropped after a while, not an error', async () => {
      const body = status('wamid.NOT-OURS-123', 'delivered', new Date());
      expect((await h.post(body)).status).toBe(200);
      await h.service.whatsapp.worker.idle();
      const event = await h.service.database.db.selectFrom('whatsapp_webhook_events').selectAll().where('body', '=', body.toString()).executeTakeFirstOrThrow();
      // Read again shortly (our own send may not have stored the id yet), then given up after STATUS_MATCH_WINDOW_MS.
      expect(event.processed_at).toBeNull();
      expect(event.lease_until).not.toBeNull();
      expect(event.attempts).toBe(0);
      // Two minutes later (moved back in time here) it is finished, the unmatched status noted.
      await h.service.database.db
        .updateTable('whatsapp_webhook_events')
        .set({ received_at: new Date(Date.now() - 3 * 60_000), lease_until: null })
        .where('id', '=', event.id)
        .execute();
      h.service.whatsapp.worker.wake();
      const finished = await until(async () => {
        const row = await h.service.database.db.selectFrom('whatsapp_webhook_events').selectAll().where('id', '=', event.id).executeTakeFirstOrThrow();
        return row.processed_at === null ? undefined : row;
      });
      expect(finished).toMatchObject({ outcome: 'processed', detail: '1 status update(s) for messages we did not send' });
    });
  });

  describe('sending', () => {
    it('retries a Graph 500 and sends once the Graph answers 200', async () => {
      const customer = '31610000003';
      h.graphScript.push((_req, res) => sendJson(res, 500, { error: { message: 'An unknown error has occurred.', type: 'OAuthException', code: 1 } }));
      await h.post(text(customer, 'retry me'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'accepted' ? rows : undefined;
      });
      expect(sendsTo(customer)).toHaveLength(2);
      expect(row).toMatchObject({ attempts: 2, http_status: 200, message_id: expect.stringMatching(/^wamid\.OUT/) });
    });

    it('retries a 429 and a rate-limit code, and gives up after the last retry with the failure recorded', async () => {
      const customer = '31610000004';
      h.graphScript.push(
        (_req, res) => sendJson(res, 429, { error: { message: 'Too many calls', code: 4 } }),
        (_req, res) => sendJson(res, 400, { error: { message: '(#130429) Rate limit hit', code: 130429 } }),
        (_req, res) => sendJson(res, 503, { error: { message: 'Service unavailable', code: 131016 } }),
      );
      await h.post(text(customer, 'busy Graph'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'failed' ? rows : undefined;
      });
      // TEST_WORKER has two retry delays: three attempts in all.
      expect(sendsTo(customer)).toHaveLength(3);
      expect(row).toMatchObject({ attempts: 3, http_status: 503, error_code: 131016, error_detail: expect.stringContaining('Service unavailable') });
    });

    it('waits as long as a Retry-After asks when that is longer than the schedule (the schedule is the floor)', async () => {
      const customer = '31610000010';
      const at: number[] = [];
      h.graphScript.push(
        (_req, res) => {
          at.push(performance.now());
          res.setHeader('retry-after', '1');
          sendJson(res, 429, { error: { message: 'Too many calls', code: 4 } });
        },
        (_req, res) => {
          at.push(performance.now());
          sendJson(res, 200, { messaging_product: 'whatsapp', messages: [{ id: 'wamid.OUT-RETRY-AFTER' }] });
        },
      );
      await h.post(text(customer, 'slow down'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'accepted' ? rows : undefined;
      });
      expect(row).toMatchObject({ attempts: 2, message_id: 'wamid.OUT-RETRY-AFTER' });
      // TEST_WORKER's first retry delay is 100 ms; Meta asked for 1 s.
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(950);
    });

    it('records 131047 (outside the 24-hour window) and does not retry it', async () => {
      const customer = '31610000005';
      h.graphScript.push((_req, res) => {
        const body = fixture('graph-error-131047');
        res.writeHead(400, { 'content-type': 'application/json', 'content-length': body.length });
        res.end(body);
      });
      await h.post(text(customer, 'too late'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'failed' ? rows : undefined;
      });
      await new Promise((r) => setTimeout(r, 400));
      expect(sendsTo(customer)).toHaveLength(1);
      expect(row).toMatchObject({ attempts: 1, http_status: 400, error_code: 131047, error_detail: expect.stringContaining('24 hours') });
    });

    it('records another 4xx (an expired token) without retrying', async () => {
      const customer = '31610000006';
      h.graphScript.push((_req, res) => sendJson(res, 401, { error: { message: 'Error validating access token: Session has expired', type: 'OAuthException', code: 190 } }));
      await h.post(text(customer, 'token expired'));
      const [row] = await until(async () => {
        const rows = await outbound(customer);
        return rows[0]?.status === 'failed' ? rows : undefined;
      });
      await new Promise((r) => setTimeout(r, 400));
      expect(sendsTo(customer)).toHaveLength(1);
      expect(row).toMatchObject({ http_status: 401, error_code: 190 });
    });
  });
});
