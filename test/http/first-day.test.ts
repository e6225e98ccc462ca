/**
 * The Overview's first-day list (docs/analytics.md, "The first day"), through the real service: every step starts
 * undone on a fresh workspace and is ticked by doing the thing itself (naming the workspace, adding knowledge, trying a
 * question, putting the chat on a site, inviting a colleague, saying who is available), never by hand; agents get 403.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FIRST_WORKSPACE } from '../../src/accounts/first-workspace.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { addUserWithToken, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

describeEachDatabase('the first-day list', (get) => {
  let service: TestService;
  let owner = '';
  const state = async () => {
    const res = await service.api('GET', '/v1/workspace/first-day', { token: owner });
    expect(res.status).toBe(200);
    return res.body as { steps: { id: string; done: boolean }[]; done: boolean };
  };
  const done = async () => (await state()).steps.filter((s) => s.done).map((s) => s.id);

  beforeAll(async () => {
    service = await startTestService(get());
    // A workspace as the first start makes it: the placeholder name and one owner.
    const created = await service.api('POST', '/v1/admin/workspaces', { token: TEST_ADMIN_TOKEN, body: { name: FIRST_WORKSPACE.name, owner_email: 'owner@trailtent.example' } });
    expect(created.status).toBe(201);
    owner = created.body.owner.token;
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('starts with every step to do, in the order the list names them', async () => {
    const first = await state();
    expect(first.steps).toEqual(
      ['name_workspace', 'add_knowledge', 'try_question', 'put_chat_on_site', 'invite_colleague', 'set_availability'].map((id) => ({ id, done: false })),
    );
    expect(first.done).toBe(false);
  });

  it('ticks each step when it is done, and is done when all are', async () => {
    expect((await service.api('PATCH', '/v1/workspace', { token: owner, body: { name: 'Trail & Tent' } })).status).toBe(200);
    expect(await done()).toEqual(['name_workspace']);

    const entry = await service.api('POST', '/v1/knowledge/entries', { token: owner, body: { type: 'qa', title: 'Do you repair tents?', text: 'Yes, within a week, from 25 euro.', language: 'en' } });
    expect(entry.status, entry.text).toBe(201);
    expect(await done()).toEqual(['name_workspace', 'add_knowledge']);

    expect((await service.api('POST', '/v1/knowledge/try', { token: owner, body: { question: 'do you fix broken tents' } })).status).toBe(200);
    await expect.poll(done).toEqual(['name_workspace', 'add_knowledge', 'try_question']);

    // Listed sites with the switch off are not "on your site"; on, they are.
    expect((await service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: ['https://trailtent.example'], enabled: false } })).status).toBe(200);
    expect(await done()).not.toContain('put_chat_on_site');
    expect((await service.api('PUT', '/v1/webchat', { token: owner, body: { allowed_origins: ['https://trailtent.example'], enabled: true } })).status).toBe(200);
    expect(await done()).toContain('put_chat_on_site');

    const agent = await addUserWithToken(service, owner, 'sam@trailtent.example', 'agent');
    expect(await done()).toContain('invite_colleague');
    expect((await state()).done).toBe(false);

    expect((await service.api('PUT', '/v1/me/presence', { token: agent.token, body: { status: 'available' } })).status).toBe(200);
    const last = await state();
    expect(last.steps.every((s) => s.done)).toBe(true);
    expect(last.done).toBe(true);
  });

  it('is for owners and admins: an agent gets 403', async () => {
    const agent = await addUserWithToken(service, owner, 'kim@trailtent.example', 'agent');
    expect((await service.api('GET', '/v1/workspace/first-day', { token: agent.token })).status).toBe(403);
  });
});
