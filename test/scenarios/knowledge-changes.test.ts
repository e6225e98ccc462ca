/**
 * Answers a knowledge change moved (docs/scenarios.md, "Answers a knowledge change moved"; issue 39 item 5): saved
 * checks keep a question with its answer; after the knowledge is written, one re-run per workspace (after a quiet
 * spell, one engine) asks them again and plays the web-chat scenarios again, and GET /v1/knowledge/changes lists the
 * answers that changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECHECK_QUIET_MS } from '../../src/scenarios/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { runScenario, saveScenario } from './helpers.ts';

describeEachDatabase('answers a knowledge change moved', (get) => {
  let service: TestService;
  let second: TestService;
  /** The re-runs' clock runs this far ahead of the real one: past the quiet spell or not. */
  let ahead = 0;
  const now = () => new Date(Date.now() + ahead);
  const options = { knowledgeRechecks: { intervalMs: 0, now } };

  beforeAll(async () => {
    service = await startTestService(get(), {}, options);
    second = await startTestService(get(), {}, options);
  });
  afterAll(async () => {
    await second?.stop();
    await service?.stop();
  });

  async function workspace(name: string) {
    const ws = await seedWorkspace(service, name);
    const key = await service.api('POST', '/v1/keys/sync', { token: ws.owner });
    const sync = (method: string, path: string, body?: unknown) => service.api(method, path, { headers: { 'x-sync-key': key.body.key }, ...(body === undefined ? {} : { body }) });
    return { ...ws, sync };
  }
  const entry = (title: string, text: string) => ({ type: 'qa', title, text, language: 'en' });
  const rechecks = async (workspaceId: string) =>
    Number((await get().db.selectFrom('knowledge_rechecks').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow()).n);
  /** Runs what is due once the quiet spell is over, on one engine (or both at once): what ran for the workspace. */
  async function afterQuiet(ws: { workspaceId: string }, ...engines: TestService[]) {
    ahead = RECHECK_QUIET_MS + 1_000;
    try {
      const ran = (await Promise.all((engines.length ? engines : [service]).map((e) => e.knowledgeRechecks.runDue()))).flat();
      return ran.filter((r) => r.workspaceId === ws.workspaceId);
    } finally {
      ahead = 0;
    }
  }

  describe('saved checks', () => {
    it('keep the question with the answer it gets now; one per question; owners and admins only', async () => {
      const ws = await workspace('Checks');
      await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: entry('How fast do you ship?', 'We ship within two working days.') });
      const saved = await service.api('POST', '/v1/knowledge/checks', { token: ws.admin, body: { question: 'How fast do you ship?', language: 'en' } });
      expect(saved.status).toBe(201);
      expect(saved.body.check).toMatchObject({ question: 'How fast do you ship?', language: 'en', answer: { source: 'knowledge_base' } });
      expect(saved.body.check.answer.text).toContain('two working days');
      const again = await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: 'How fast do you ship?', language: 'en' } });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'question' }] });
      expect((await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: '' } })).status).toBe(422);
      expect((await service.api('POST', '/v1/knowledge/checks', { token: ws.agent, body: { question: 'Hi?' } })).status).toBe(403);
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.agent })).status).toBe(403);
      const listed = await service.api('GET', '/v1/knowledge/checks', { token: ws.owner });
      expect(listed.body.checks).toEqual([saved.body.check]);
      expect((await service.api('DELETE', `/v1/knowledge/checks/${saved.body.check.id}`, { token: ws.owner })).status).toBe(204);
      expect((await service.api('DELETE', `/v1/knowledge/checks/${saved.body.check.id}`, { token: ws.owner })).status).toBe(404);
      expect((await service.api('GET', '/v1/knowledge/checks', { token: ws.owner })).body.checks).toEqual([]);
    });
  });

  describe('a knowledge change runs them again', () => {
    it('an edit that changes an answer is listed with both texts; one that does not is "same"; accepting keeps the new answer', async () => {
      const ws = await workspace('Moved');
      const shipping = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: entry('How fast do you ship?', 'We ship within two working days.') });
      await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: entry('Can I return a jacket?', 'Returns are free within 30 days.') });
      const ship = (await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: 'How fast do you ship?', language: 'en' } })).body.check;
      const ret = (await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: 'Can I return a jacket?', language: 'en' } })).body.check;
      // The entries just written wait for their re-run; none ran yet.
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body).toEqual({ pending: true, change: null });
      await afterQuiet(ws);
      const first = (await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body;
      expect(first).toMatchObject({ pending: false, change: { checks: 2, same: 2, changed: [] } });

      const edited = await service.api('PUT', `/v1/knowledge/entries/${shipping.body.id}`, { token: ws.owner, body: entry('How fast do you ship?', 'We ship the same day when you order before 3 pm.') });
      expect(edited.status).toBe(200);
      // Waiting for the quiet spell: nothing runs yet.
      expect((await service.knowledgeRechecks.runDue()).filter((r) => r.workspaceId === ws.workspaceId)).toEqual([]);
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body).toMatchObject({ pending: true, change: { id: first.change.id } });

      const ran = await afterQuiet(ws);
      expect(ran).toEqual([expect.objectContaining({ workspaceId: ws.workspaceId, ran: true, checks: 2, changed: 1 })]);
      const changes = (await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body;
      expect(changes).toMatchObject({ pending: false, change: { checks: 2, same: 1, scenarios: [] } });
      expect(changes.change.changed).toHaveLength(1);
      const moved = changes.change.changed[0];
      expect(moved).toMatchObject({ check_id: ship.id, question: 'How fast do you ship?', accepted: false });
      expect(moved.before.text).toBe(ship.answer.text);
      expect(moved.before.text).toContain('two working days');
      expect(moved.after.text).toContain('same day');
      expect(moved.after.text).not.toBe(ret.answer.text);

      const accepted = await service.api('POST', `/v1/knowledge/checks/${ship.id}/accept`, { token: ws.admin });
      expect(accepted.status).toBe(200);
      expect(accepted.body.check.answer.text).toBe(moved.after.text);
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.change.changed[0].accepted).toBe(true);
      // The return check did not change: nothing to accept.
      expect((await service.api('POST', `/v1/knowledge/checks/${ret.id}/accept`, { token: ws.owner })).status).toBe(409);

      // An edit elsewhere that leaves both answers as they are: a re-run, and every answer "same".
      await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: entry('Where is your shop?', 'Our shop is in Utrecht.') });
      expect(await afterQuiet(ws)).toEqual([expect.objectContaining({ ran: true, checks: 2, changed: 0 })]);
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.change).toMatchObject({ checks: 2, same: 2, changed: [] });

      // Deleting the page moves the answer again.
      expect((await service.api('DELETE', `/v1/knowledge/entries/${shipping.body.id}`, { token: ws.owner })).status).toBe(204);
      await afterQuiet(ws);
      const gone = (await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.change;
      expect(gone.changed.map((c: { check_id: string }) => c.check_id)).toEqual([ship.id]);
      expect(gone.changed[0].before.text).toContain('same day');
      expect(gone.changed[0].after.text).not.toContain('same day');
    });

    it('a sync batch of 5 pages, and 5 pages sent one by one, each make one re-run; a page sent again unchanged makes none', async () => {
      const ws = await workspace('Batch');
      const page = (i: number, body: string) => ({ kind: 'page', external_id: `p${i}`, title: `Page ${i}`, body, language: 'en' });
      await ws.sync('POST', '/v1/sync/batch', { upserts: [0, 1, 2, 3, 4].map((i) => page(i, `Parcels to zone ${i} take ${i + 1} days.`)), deletes: [] });
      await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: 'How long do parcels to zone 3 take?', language: 'en' } });
      await afterQuiet(ws); // the batch before the check: no checks yet were there when it was written, it runs now
      const before = await rechecks(ws.workspaceId);

      const batch = await ws.sync('POST', '/v1/sync/batch', { upserts: [0, 1, 2, 3, 4].map((i) => page(i, `Parcels to zone ${i} take ${i + 2} days.`)), deletes: [] });
      expect(batch.status).toBe(200);
      expect(await afterQuiet(ws)).toEqual([expect.objectContaining({ workspaceId: ws.workspaceId, ran: true, checks: 1, changed: 1 })]);
      expect(await afterQuiet(ws)).toEqual([]);
      expect(await rechecks(ws.workspaceId)).toBe(before + 1);

      for (const i of [0, 1, 2, 3, 4]) expect((await ws.sync('PUT', `/v1/sync/pages/p${i}`, { title: `Page ${i}`, body: `Parcels to zone ${i} take ${i + 3} days.`, language: 'en' })).status).toBe(200);
      expect(await afterQuiet(ws)).toHaveLength(1);
      expect(await rechecks(ws.workspaceId)).toBe(before + 2);

      // The same page again: written (its mark), but the knowledge's version did not move, so nothing runs.
      expect((await ws.sync('PUT', '/v1/sync/pages/p3', { title: 'Page 3', body: 'Parcels to zone 3 take 6 days.', language: 'en' })).body.result).toBe('unchanged');
      expect(await afterQuiet(ws)).toEqual([expect.objectContaining({ workspaceId: ws.workspaceId, ran: false })]);
      expect(await rechecks(ws.workspaceId)).toBe(before + 2);
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.pending).toBe(false);
    });

    it("a knowledge source's pages (a file uploaded again) move the answer too", async () => {
      const ws = await workspace('Files');
      const upload = async (text: string) => {
        const form = new FormData();
        form.append('file', new Blob([new TextEncoder().encode(text)], { type: 'text/plain' }), 'returns.txt');
        form.append('language', 'en');
        const res = await fetch(`${service.url}/v1/knowledge/files`, { method: 'POST', headers: { authorization: `Bearer ${ws.owner}` }, body: form });
        expect(res.status).toBe(201);
      };
      await upload('Returns\n\nShoes can be returned within 30 days.');
      await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: 'Can I return shoes?', language: 'en' } });
      await afterQuiet(ws);
      await upload('Returns\n\nShoes can be returned within 60 days, in the original box.');
      expect((await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.pending).toBe(true);
      expect(await afterQuiet(ws)).toEqual([expect.objectContaining({ ran: true, changed: 1 })]);
      const moved = (await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.change.changed[0];
      expect(moved.before.text).toContain('30 days');
      expect(moved.after.text).toContain('60 days');
    });

    it('two engines that look at the same time make one re-run', async () => {
      const ws = await workspace('Engines');
      const doc = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: entry('Do you ship to Belgium?', 'Yes, Belgium takes three days.') });
      await service.api('POST', '/v1/knowledge/checks', { token: ws.owner, body: { question: 'Do you ship to Belgium?', language: 'en' } });
      // Written through the second engine.
      await second.api('PUT', `/v1/knowledge/entries/${doc.body.id}`, { token: ws.owner, body: entry('Do you ship to Belgium?', 'Yes, Belgium takes four days.') });
      const ran = await afterQuiet(ws, service, second);
      expect(ran).toHaveLength(1);
      expect(ran[0]).toMatchObject({ ran: true, changed: 1 });
      expect(await rechecks(ws.workspaceId)).toBe(1);
    });

    it('plays the web-chat scenarios that were run again, with their result before and after', async () => {
      const ws = await workspace('Scenarios');
      const doc = await service.api('POST', '/v1/knowledge/entries', { token: ws.owner, body: entry('How fast do you ship?', 'We ship within two working days.') });
      const id = await saveScenario(service, ws.owner, { name: 'Shipping', channel: 'webchat', language: 'en', turns: [{ customer: 'How fast do you ship?', expect: { contains: ['two working days'] } }] });
      const first = await runScenario(service, ws.owner, id);
      expect(first).toMatchObject({ status: 'done', passed: 1 });
      // A scenario never run has nothing to compare with, and phone scenarios ask the integrator: neither is played.
      await saveScenario(service, ws.owner, { name: 'Never run', channel: 'webchat', turns: [{ customer: 'Hello' }] });

      await service.api('PUT', `/v1/knowledge/entries/${doc.body.id}`, { token: ws.owner, body: entry('How fast do you ship?', 'We ship the same day.') });
      expect(await afterQuiet(ws)).toEqual([expect.objectContaining({ ran: true, checks: 0, scenarios: 1 })]);
      await service.scenarios.idle();
      const change = (await service.api('GET', '/v1/knowledge/changes', { token: ws.owner })).body.change;
      expect(change.scenarios).toEqual([
        { scenario_id: id, name: 'Shipping', before: { run_id: first.id, runs: 1, passed: 1 }, after: { run_id: expect.any(String), status: 'done', runs: 1, passed: 0 } },
      ]);
    });
  });
});
