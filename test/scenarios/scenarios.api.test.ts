/**
 * The scenarios API (docs/interfaces.md, "Scenarios"; docs/scenarios.md, "The API"): owners and admins keep scenarios
 * by name, each checked whole; runs are queued, bounded, kept for a while, and read by id within the workspace.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OPEN_RUNS, RUNS_KEPT_PER_SCENARIO } from '../../src/scenarios/limits.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';
import { runScenario, saveScenario } from './helpers.ts';

const scenario = (name: string, more: object = {}) => ({ name, channel: 'webchat', turns: [{ customer: 'How fast do you ship?', expect: { source: 'fallback' } }], ...more });

describeEachDatabase('the scenarios API', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let other: Awaited<ReturnType<typeof seedWorkspace>>;

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service, 'Trail');
    other = await seedWorkspace(service, 'Other');
  });
  afterAll(async () => {
    await service.stop();
  });

  describe('scenarios are kept by name', () => {
    it('added, listed with their latest run, read, replaced and deleted', async () => {
      const added = await service.api('POST', '/v1/scenarios', { token: ws.admin, body: scenario('Shipping') });
      expect(added.status).toBe(201);
      const id = added.body.scenario.id as string;
      expect(added.body.scenario).toMatchObject({ name: 'Shipping', definition: scenario('Shipping') });

      const listed = await service.api('GET', '/v1/scenarios', { token: ws.owner });
      expect(listed.body.scenarios).toEqual([expect.objectContaining({ id, name: 'Shipping', last_run: null })]);
      const run = await runScenario(service, ws.owner, id);
      expect(run).toMatchObject({ status: 'done', passed: 1, pass_rate: 1 });
      expect((await service.api('GET', '/v1/scenarios', { token: ws.owner })).body.scenarios[0].last_run).toMatchObject({ id: run.id, status: 'done', pass_rate: 1 });

      const replaced = await service.api('PUT', `/v1/scenarios/${id}`, { token: ws.owner, body: scenario('Shipping times', { runs: 2 }) });
      expect(replaced.status).toBe(200);
      expect((await service.api('GET', `/v1/scenarios/${id}`, { token: ws.owner })).body.scenario).toMatchObject({ name: 'Shipping times', definition: { runs: 2 } });
      // The run kept the version it played.
      expect((await service.api('GET', `/v1/scenario-runs/${run.id}`, { token: ws.owner })).body.runs).toBe(1);

      expect((await service.api('DELETE', `/v1/scenarios/${id}`, { token: ws.owner })).status).toBe(204);
      expect((await service.api('GET', `/v1/scenarios/${id}`, { token: ws.owner })).status).toBe(404);
      expect((await service.api('DELETE', `/v1/scenarios/${id}`, { token: ws.owner })).status).toBe(404);
    });

    it('one name per workspace: a second is a 409, in another workspace it is fine', async () => {
      await saveScenario(service, ws.owner, scenario('Returns'));
      const again = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: scenario('Returns') });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'name', message: 'is already the name of another test' }] });
      const otherId = await saveScenario(service, ws.owner, scenario('Exchanges'));
      expect((await service.api('PUT', `/v1/scenarios/${otherId}`, { token: ws.owner, body: scenario('Returns') })).status).toBe(409);
      expect((await service.api('POST', '/v1/scenarios', { token: other.owner, body: scenario('Returns') })).status).toBe(201);
    });

    it('agents may not read, write or run scenarios', async () => {
      const id = await saveScenario(service, ws.owner, scenario('Agents'));
      expect((await service.api('GET', '/v1/scenarios', { token: ws.agent })).status).toBe(403);
      expect((await service.api('POST', '/v1/scenarios', { token: ws.agent, body: scenario('By an agent') })).status).toBe(403);
      expect((await service.api('POST', `/v1/scenarios/${id}/runs`, { token: ws.agent, body: {} })).status).toBe(403);
    });
  });

  describe('a scenario is checked before it is kept', () => {
    it('a wrong shape: 400 naming the field', async () => {
      const res = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: scenario('Bad', { turns: [{ customer: 'Hi', expect: { source: 'oracle' } }] }) });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('turns.0.expect.source') });
      expect((await service.api('POST', '/v1/scenarios', { token: ws.owner })).status).toBe(400);
    });

    it('an invalid pattern: 422 naming the field', async () => {
      const res = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: scenario('Pattern', { turns: [{ customer: 'Hi', expect: { matches: '[a-z' } }] }) });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'unprocessable', details: [{ field: 'turns.0.expect.matches', message: 'not a valid regular expression' }] });
    });

    it('a judge or persona without a model: 422 saying it needs one', async () => {
      const res = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: { name: 'Sim', channel: 'whatsapp', persona: { goal: 'Return a tent', style: 'brief' } } });
      expect(res.status).toBe(422);
      expect(res.body.error.message).toContain('needs a language model');
      const judged = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: scenario('Judged', { judge: { criteria: ['Polite'] } }) });
      expect(judged.status).toBe(422);
      expect(judged.body.error).toMatchObject({ code: 'unprocessable', message: expect.stringContaining('needs a language model'), details: [{ field: 'judge', message: 'needs a language model' }] });
    });

    it('a starter suite without a model: 422 saying it needs one', async () => {
      const res = await service.api('POST', '/v1/scenarios/starter', { token: ws.owner });
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'unprocessable', message: expect.stringContaining('written by a language model, and this service has none') });
    });

    it('a candidate endpoint the outbound rules refuse: 422 with the rule', async () => {
      const res = await service.api('POST', '/v1/scenarios', { token: ws.owner, body: scenario('Plain http', { integrator: { url: 'http://staging.shop.example/botlink/channel' } }) });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_url');
    });
  });

  describe('runs', () => {
    it('`runs` in the request plays it that many times; more than 20 is a 400', async () => {
      const id = await saveScenario(service, ws.owner, scenario('Twice'));
      expect(await runScenario(service, ws.owner, id, { runs: 2 })).toMatchObject({ runs: 2, passed: 2, pass_rate: 1 });
      expect((await service.api('POST', `/v1/scenarios/${id}/runs`, { token: ws.owner, body: { runs: 21 } })).status).toBe(400);
      expect((await service.api('POST', `/v1/scenarios/${randomUUID()}/runs`, { token: ws.owner, body: {} })).status).toBe(404);
    });

    it("another workspace's run is not there", async () => {
      const run = await runScenario(service, ws.owner, await saveScenario(service, ws.owner, scenario('Mine')));
      expect((await service.api('GET', `/v1/scenario-runs/${run.id}`, { token: other.owner })).status).toBe(404);
      expect((await service.api('GET', `/v1/scenario-runs/${randomUUID()}`, { token: ws.owner })).status).toBe(404);
    });

    it(`at most ${MAX_OPEN_RUNS} runs wait or play at once: 429 with Retry-After`, async () => {
      const { db } = get();
      const id = await saveScenario(service, other.owner, scenario('Busy'));
      // Runs another engine holds for a while: nobody here plays them.
      const held = Array.from({ length: MAX_OPEN_RUNS }, () => ({
        id: randomUUID(),
        workspace_id: other.workspaceId,
        scenario_id: id,
        definition: JSON.stringify(scenario('Busy')),
        runs: 1,
        status: 'running' as const,
        lease_owner: 'another-engine',
        lease_until: new Date(Date.now() + 600_000),
      }));
      await db.insertInto('scenario_runs').values(held).execute();
      const res = await service.api('POST', `/v1/scenarios/${id}/runs`, { token: other.owner, body: {} });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('5');
      // Another workspace is not held up by it.
      expect((await service.api('POST', `/v1/scenarios/${await saveScenario(service, ws.owner, scenario('Free'))}/runs`, { token: ws.owner, body: {} })).status).toBe(202);
      await db.deleteFrom('scenario_runs').where('lease_owner', '=', 'another-engine').execute();
    });

    it(`the last ${RUNS_KEPT_PER_SCENARIO} runs of a scenario are kept`, async () => {
      const { db } = get();
      const id = await saveScenario(service, ws.owner, scenario('Often'));
      const old = Array.from({ length: RUNS_KEPT_PER_SCENARIO }, (_, i) => ({
        id: randomUUID(),
        workspace_id: ws.workspaceId,
        scenario_id: id,
        definition: JSON.stringify(scenario('Often')),
        runs: 1,
        status: 'done' as const,
        created_at: new Date(Date.now() - (RUNS_KEPT_PER_SCENARIO - i) * 60_000),
      }));
      await db.insertInto('scenario_runs').values(old).execute();
      const run = await runScenario(service, ws.owner, id);
      const kept = await db.selectFrom('scenario_runs').select('id').where('scenario_id', '=', id).execute();
      expect(kept).toHaveLength(RUNS_KEPT_PER_SCENARIO);
      expect(kept.map((r) => r.id)).toContain(run.id);
      expect(kept.map((r) => r.id)).not.toContain(old[0]!.id);
      // The list of runs shows the kept ones, newest first, without their transcripts.
      const listed = await service.api('GET', `/v1/scenarios/${id}/runs`, { token: ws.admin });
      expect(listed.status).toBe(200);
      expect(listed.body.runs).toHaveLength(RUNS_KEPT_PER_SCENARIO);
      expect(listed.body.runs[0]).toEqual({
        id: run.id, status: 'done', runs: 1, passed: 1, pass_rate: 1,
        created_at: run.created_at, started_at: run.started_at, finished_at: run.finished_at,
      });
      expect(listed.body.runs.slice(1).map((r: { id: string }) => r.id)).toEqual(old.slice(1).reverse().map((r) => r.id));
    });

    it('the list of a scenario\'s runs: newest first with each pass rate, a running one without; 404 for a scenario not there', async () => {
      const id = await saveScenario(service, ws.owner, scenario('Listed', { runs: 2 }));
      expect((await service.api('GET', `/v1/scenarios/${id}/runs`, { token: ws.owner })).body).toEqual({ runs: [] });
      const first = await runScenario(service, ws.owner, id);
      const second = await runScenario(service, ws.owner, id, { runs: 1 });
      // A run that waits: another engine holds it.
      const waiting = randomUUID();
      await get().db.insertInto('scenario_runs').values({
        id: waiting, workspace_id: ws.workspaceId, scenario_id: id, definition: JSON.stringify(scenario('Listed')), runs: 3,
        status: 'running', lease_owner: 'another-engine', lease_until: new Date(Date.now() + 600_000),
      }).execute();
      const listed = await service.api('GET', `/v1/scenarios/${id}/runs`, { token: ws.owner });
      expect(listed.body.runs.map((r: { id: string; runs: number; passed: number; pass_rate: number | null; status: string }) => [r.id, r.status, r.runs, r.passed, r.pass_rate])).toEqual([
        [waiting, 'running', 3, 0, null],
        [second.id, 'done', 1, 1, 1],
        [first.id, 'done', 2, 2, 1],
      ]);
      expect(listed.body.runs[0]).not.toHaveProperty('transcripts');
      expect((await service.api('GET', `/v1/scenarios/${id}/runs`, { token: other.owner })).status).toBe(404);
      expect((await service.api('GET', `/v1/scenarios/${randomUUID()}/runs`, { token: ws.owner })).status).toBe(404);
      expect((await service.api('GET', '/v1/scenarios/not-a-uuid/runs', { token: ws.owner })).status).toBe(404);
      expect((await service.api('GET', `/v1/scenarios/${id}/runs`, { token: ws.agent })).status).toBe(403);
      await get().db.deleteFrom('scenario_runs').where('id', '=', waiting).execute();
    });
  });
});
