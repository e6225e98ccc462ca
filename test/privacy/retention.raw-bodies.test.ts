/**
 * Meta's raw webhook bodies follow the retention of the workspace whose number they were for, when it keeps less than
 * the worker's week (docs/privacy.md, "Retention"), on both databases, with two workspaces: a body of the workspace
 * that keeps one day goes after a day; a body not processed yet, and the other workspace's, stay.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms);

describeEachDatabase("raw WhatsApp bodies and the workspace's retention", (get) => {
  let service: TestService;
  let short: Awaited<ReturnType<typeof seedWorkspace>>;
  let long: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    service = await startTestService(get(), {}, { retention: { intervalMs: 0 } });
    short = await seedWorkspace(service, `Short${Date.now()}`);
    long = await seedWorkspace(service, `Long${Date.now()}`);
    expect((await service.api('PUT', '/v1/workspace/retention', { token: short.owner, body: { days: 1 } })).status).toBe(200);
  });
  afterAll(async () => {
    await service?.stop();
  });

  async function body(input: { workspaceId: string | null; receivedAgo: number; processedAgo: number | null }): Promise<string> {
    const id = randomUUID();
    await get()
      .db.insertInto('whatsapp_webhook_events')
      .values({
        id,
        body: '{"object":"whatsapp_business_account","entry":[]}',
        received_at: ago(input.receivedAgo),
        processed_at: input.processedAgo === null ? null : ago(input.processedAgo),
        outcome: input.processedAgo === null ? null : 'processed',
        workspace_id: input.workspaceId,
        // Held by another engine, so this one's worker leaves it as it is.
        lease_owner: input.processedAgo === null ? 'another-engine' : null,
        lease_until: input.processedAgo === null ? new Date(Date.now() + 60_000) : null,
      })
      .execute();
    return id;
  }

  describe('the purge', () => {
    it("deletes a processed body older than its workspace's period, and nothing else", async () => {
      const old = await body({ workspaceId: short.workspaceId, receivedAgo: 2 * DAY, processedAgo: 2 * DAY });
      const recent = await body({ workspaceId: short.workspaceId, receivedAgo: 3_600_000, processedAgo: 3_600_000 });
      const waiting = await body({ workspaceId: null, receivedAgo: 2 * DAY, processedAgo: null });
      const others = await body({ workspaceId: long.workspaceId, receivedAgo: 2 * DAY, processedAgo: 2 * DAY });
      const run = await service.privacy.retention.purge({ force: true });
      expect(run.purged.whatsapp_raw_bodies).toBe(1);
      const left = await get().db.selectFrom('whatsapp_webhook_events').select('id').where('id', 'in', [old, recent, waiting, others]).execute();
      expect(left.map((r) => r.id).sort()).toEqual([recent, waiting, others].sort());
    });
  });
});
