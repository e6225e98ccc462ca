/**
 * Who handles a conversation, persisted (docs/architecture.md, "Who handles a conversation"): the attendant region's
 * paths run through the real runtime on each database, written with the snapshot and its projection columns, and a
 * session passivated while a person holds it comes back held; a copy of another process is reloaded when the attendant
 * changed there, so its next message is held too.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { accountsRepository } from '../../db/repositories/accounts.repository.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { SESSION_MACHINE_VERSION, type AgentRef } from '../../machines/session-types.ts';
import { createAccountsService } from '../../src/accounts/accounts-service.ts';
import { createAi } from '../../src/ai/index.ts';
import { phrase } from '../../src/ai/phrases.ts';
import { createBotLinkClient } from '../../src/botlink/client.ts';
import { createToolsClient } from '../../src/botlink/tools-client.ts';
import { channelRenderers } from '../../src/channels/renderers.ts';
import { createKnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { createSessionRuntime, type SessionRuntime } from '../../src/sessions/session-runtime.ts';
import { describeEachDatabase } from '../helpers/db.ts';

describeEachDatabase('who handles a conversation, persisted', (get) => {
  let workspaceId = '';
  let agent: AgentRef;
  const http = new GuardedClient();
  const runtimes: SessionRuntime[] = [];
  const makeRuntime = (instanceId: string) => {
    const { db } = get();
    const runtime = createSessionRuntime({
      renderers: channelRenderers,
      sessions: sessionsRepository(db),
      credentials: async () => undefined,
      botlink: createBotLinkClient({ http }),
      tools: createToolsClient({ http }),
      knowledge: createKnowledgeService({ knowledge: knowledgeRepository(db) }),
      ai: createAi(null),
      logger: createLogger('silent'),
      instanceId,
      idleMs: 0,
    });
    runtimes.push(runtime);
    return runtime;
  };
  const row = (externalId: string) =>
    get().db.selectFrom('sessions').select(['handled_by', 'agent_user_id', 'waiting_since', 'handback_at', 'attendant_revision', 'status', 'state']).where('external_id', '=', externalId).executeTakeFirstOrThrow();
  const target = (externalId: string) => ({ workspaceId, channel: 'webchat' as const, externalId });

  beforeAll(async () => {
    const accounts = createAccountsService({ accounts: accountsRepository(get().db) });
    const created = await accounts.createWorkspace({ name: 'Attendants', ownerEmail: 'ann@attendants.example' });
    workspaceId = created.workspace.id;
    const user = await get().db.selectFrom('users').select(['id', 'email']).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    agent = { userId: user.id, email: user.email, name: 'Ann' };
  });
  afterAll(async () => {
    for (const r of runtimes) await r.stop(100);
    await http.close();
  });

  it('bot → waiting → agent → bot, each written with the snapshot (revision, agent, waiting_since)', async () => {
    const runtime = makeRuntime('engine-1');
    const asked = await runtime.handleMessage({ ...target('chat-paths'), text: 'Can I speak to a real person please?', language: 'en' });
    expect(asked.cancelled === false && asked.text).toBe(phrase('handoff_waiting_closed', 'en'));
    await runtime.settled();
    const waiting = await row('chat-paths');
    expect(waiting).toMatchObject({ handled_by: 'waiting', agent_user_id: null, handback_at: null, attendant_revision: 1, status: 'active', state: 'idle' });
    expect(waiting.waiting_since).not.toBeNull();

    const taken = await runtime.control(target('chat-paths'), { type: 'takeover', agent, at: Date.now() });
    expect(taken).toMatchObject({ applied: true, handledBy: 'agent', agent, reason: 'takeover' });
    expect(await row('chat-paths')).toMatchObject({ handled_by: 'agent', agent_user_id: agent.userId, waiting_since: null, attendant_revision: 2 });

    const held = await runtime.handleMessage({ ...target('chat-paths'), text: 'Hello Ann', language: 'en' });
    expect(held).toMatchObject({ cancelled: false, held: true, text: '' });

    const back = await runtime.control(target('chat-paths'), { type: 'handback', at: Date.now() });
    expect(back).toMatchObject({ applied: true, handledBy: 'bot', reason: 'handback' });
    expect(await row('chat-paths')).toMatchObject({ handled_by: 'bot', agent_user_id: null, attendant_revision: 3 });
    const again = await runtime.control(target('chat-paths'), { type: 'handback', at: Date.now() });
    expect(again.applied).toBe(false);
  });

  it('close ends the session in the list until the customer writes again', async () => {
    const runtime = makeRuntime('engine-2');
    await runtime.handleMessage({ ...target('chat-close'), text: 'Is shipping free?', language: 'en' });
    await runtime.settled();
    expect((await runtime.control(target('chat-close'), { type: 'close', at: Date.now() })).closed).toBe(true);
    expect(await row('chat-close')).toMatchObject({ handled_by: 'bot', status: 'ended' });
    const answered = await runtime.handleMessage({ ...target('chat-close'), text: 'And to Belgium?', language: 'en' });
    expect(answered).toMatchObject({ cancelled: false, text: phrase('dont_know', 'en') });
    await runtime.settled();
    expect((await row('chat-close')).status).toBe('active');
  });

  it('passivated while held, the session comes back held; another process reloads its stale copy', async () => {
    const one = makeRuntime('engine-3');
    const two = makeRuntime('engine-4');
    await one.handleMessage({ ...target('chat-restore'), text: 'Do you ship to Spain?', language: 'en' });
    // The other process knows the session too (its copy: the bot handles it).
    await two.handleMessage({ ...target('chat-restore'), text: 'And to Portugal?', language: 'en' });
    await one.settled();
    await two.settled();
    expect((await one.control(target('chat-restore'), { type: 'takeover', agent, at: Date.now() })).applied).toBe(true);
    await one.passivateIdle(Date.now() + 1);
    expect(one.liveCount()).toBe(0);
    const restored = await one.handleMessage({ ...target('chat-restore'), text: 'Still there?', language: 'en' });
    expect(restored).toMatchObject({ held: true });
    // The other process's copy is stale (revision 0): its lease round reloads it, so this message is held as well.
    const other = await two.handleMessage({ ...target('chat-restore'), text: 'Hello?', language: 'en' });
    expect(other).toMatchObject({ held: true });
  });

  it('a conversation held by a person when the v3 machine saved it comes back held after the upgrade, and counts on from its revision', async () => {
    const repo = sessionsRepository(get().db);
    const v3 = JSON.parse(readFileSync(new URL('../fixtures/session-snapshots/v3-held.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
    const snapshot = { ...v3, context: { ...v3.context, workspaceId, conversationId: 'chat-v3', agent } };
    const session = await repo.findOrCreate({ id: randomUUID(), workspace_id: workspaceId, channel: 'webchat', external_id: 'chat-v3', language: 'en', customer_phone: null, machine_version: 3 });
    await repo.saveSnapshot({ id: session.id, state: 'idle', status: 'active', snapshot, machineVersion: 3 });
    await get().db.updateTable('sessions').set({ handled_by: 'agent', agent_user_id: agent.userId, attendant_revision: 1 }).where('id', '=', session.id).execute();

    const runtime = makeRuntime('engine-6');
    expect(await runtime.handleMessage({ ...target('chat-v3'), text: 'Hello Ann?', language: 'en' })).toMatchObject({ cancelled: false, held: true, text: '' });
    const back = await runtime.control(target('chat-v3'), { type: 'handback', at: Date.now() });
    expect(back).toMatchObject({ applied: true, handledBy: 'bot', reason: 'handback' });
    const saved = await get().db.selectFrom('sessions').select(['handled_by', 'agent_user_id', 'attendant_revision', 'machine_version', 'snapshot']).where('id', '=', session.id).executeTakeFirstOrThrow();
    expect(saved).toMatchObject({ handled_by: 'bot', agent_user_id: null, attendant_revision: 2, machine_version: SESSION_MACHINE_VERSION });
    expect(saved.snapshot).toMatchObject({ value: { attendant: 'bot', conversation: 'idle' }, context: { attendantRevision: 2, history: [{ text: 'Is shipping free?' }, { text: 'Shipping is free above 50 euros.' }] } });
    expect((saved.snapshot as { context: object }).context).not.toHaveProperty('handlerRevision');
  });

  it("a turn's message is stored once, however often it is written (a WhatsApp message retried after a crash)", async () => {
    const runtime = makeRuntime('engine-5');
    const first = await runtime.handleMessage({ ...target('chat-once'), text: 'Is shipping free?', language: 'en' });
    await runtime.settled();
    const repo = sessionsRepository(get().db);
    const message = { session_id: first.sessionId, from: 'customer' as const, text: 'Is shipping free?', source: null, agent_user_id: null, turn_id: first.turnId, outbound_id: null, at: new Date().toISOString() };
    await repo.addMessage({ id: crypto.randomUUID(), ...message });
    await repo.addMessage({ id: crypto.randomUUID(), ...message });
    const rows = await repo.messages(first.sessionId, null, 100);
    expect(rows!.map((m) => [m.from, m.text])).toEqual([
      ['customer', 'Is shipping free?'],
      ['bot', phrase('dont_know', 'en')],
    ]);
  });
});
