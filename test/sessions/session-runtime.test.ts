import { readFileSync } from 'node:fs';
/**
 * The session runtime with real parts: the database (both kinds), the Bot Link client and tools client against a
 * real HTTPS integrator that verifies our signatures, the knowledge service, and the embedded answerer.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createActor, fromPromise } from 'xstate';
import { accountsRepository } from '../../db/repositories/accounts.repository.ts';
import { knowledgeRepository } from '../../db/repositories/knowledge.repository.ts';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { sessionMachine } from '../../machines/session.machine.ts';
import { SESSION_MACHINE_VERSION } from '../../machines/session-types.ts';
import { createAccountsService } from '../../src/accounts/accounts-service.ts';
import { createAi } from '../../src/ai/index.ts';
import { MAX_SPOKEN_CHARS } from '../../src/ai/limits.ts';
import { phrase } from '../../src/ai/phrases.ts';
import type { AiPort } from '../../src/ai/types.ts';
import { createBotLinkClient } from '../../src/botlink/client.ts';
import { createToolsClient } from '../../src/botlink/tools-client.ts';
import { createKnowledgeService } from '../../src/knowledge/knowledge-service.ts';
import { createLogger } from '../../src/log.ts';
import { GuardedClient } from '../../src/net/guarded-client.ts';
import { channelRenderers } from '../../src/channels/renderers.ts';
import { createSessionRuntime, type Credentials, type SessionRuntime } from '../../src/sessions/session-runtime.ts';
import { SpokenTurn } from '../../src/sessions/spoken-turn.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type Handler, type TestHttpsServer } from '../helpers/https-server.ts';

const key = 'integration-key-for-the-runtime-tests-0123456789';

/** A spoken turn whose pieces (the talk cycle's last:false text, without the space between them) land in `heard`. */
function spokenTurn(heard: string[]): SpokenTurn {
  return new SpokenTurn({ id: randomUUID(), voice: { say: (text, { last }) => void (last ? undefined : heard.push(text.trimEnd())) } });
}

describeEachDatabase('the session runtime', (get) => {
  let integrator: TestHttpsServer;
  let http: GuardedClient;
  let workspaceId: string;
  let credentials: Credentials | undefined;
  const runtimes: SessionRuntime[] = [];
  /** Each channel request the integrator received, with when it started and ended. */
  let calls: { message: string; start: number; end: number }[] = [];
  let answer: (message: string) => { status: number; body: unknown; delayMs?: number } = () => ({ status: 200, body: { reply: 'Integrator reply.' } });

  const makeRuntime = (overrides: Partial<Parameters<typeof createSessionRuntime>[0]> = {}) => {
    const { db } = get();
    const runtime = createSessionRuntime({
      renderers: channelRenderers,
      sessions: sessionsRepository(db),
      credentials: async () => credentials,
      botlink: createBotLinkClient({ http }),
      tools: createToolsClient({ http }),
      knowledge: createKnowledgeService({ knowledge: knowledgeRepository(db) }),
      ai: createAi(null),
      logger: createLogger('silent'),
      ...overrides,
    });
    runtimes.push(runtime);
    return runtime;
  };

  beforeAll(async () => {
    const handler: Handler = async (req, res, body) => {
      if (refuseUnsigned(key, req, res, body)) return;
      const message = JSON.parse(body.toString()).message as string;
      const start = performance.now();
      const { status, body: reply, delayMs } = answer(message);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      calls.push({ message, start, end: performance.now() });
      sendJson(res, status, reply);
    };
    integrator = await startHttpsServer(handler);
    http = new GuardedClient({ allow: ['127.0.0.1/32'] });
    const { db } = get();
    const created = await createAccountsService({ accounts: accountsRepository(db) }).createWorkspace({ name: 'Shop', ownerEmail: 'o@shop.example' });
    workspaceId = created.workspace.id;
    const knowledge = createKnowledgeService({ knowledge: knowledgeRepository(db) });
    await knowledge.upsert(workspaceId, 'shipping', { kind: 'page', title: 'Shipping', language: 'en', body: 'We ship every order within two working days. Shipping is free above 50 euro.' });
    await knowledge.upsert(workspaceId, 'verzending', { kind: 'page', title: 'Verzending', language: 'nl', body: 'Wij verzenden elke bestelling binnen twee werkdagen. Verzending is gratis boven 50 euro.' });
  });
  afterAll(async () => {
    for (const r of runtimes) await r.stop(100);
    await http.close();
    await integrator.close();
  });
  beforeEach(() => {
    calls = [];
    credentials = { endpointUrl: `${integrator.origin}/channel`, key };
    answer = () => ({ status: 200, body: { reply: 'Integrator reply.' } });
  });

  it('WhatsApp: a handled answer is sent verbatim, the turn and the customer are saved', async () => {
    answer = () => ({ status: 200, body: { reply: '*Order 7*: shipped\nhttps://track.example/7', customer: { email: 'jan@example.nl', name: 'Jan' } } });
    const runtime = makeRuntime();
    const result = await runtime.handleMessage({ workspaceId, channel: 'whatsapp', externalId: 'wa-1', text: 'order 7?', language: 'nl', customerPhone: '+31611111111' });
    expect(result).toMatchObject({ cancelled: false, source: 'integrator', text: '*Order 7*: shipped\nhttps://track.example/7' });
    await runtime.settled();
    const repo = sessionsRepository(get().db);
    const row = (await repo.find(workspaceId, 'whatsapp', 'wa-1'))!;
    expect(row).toMatchObject({ customer_email: 'jan@example.nl', customer_name: 'Jan', customer_phone: '+31611111111', turn_count: 1, state: 'idle', lease_owner: null });
    const [turn] = await repo.turns(row.id);
    expect(turn).toMatchObject({ status: 'completed', source: 'integrator', customer_message: 'order 7?', ordinal: 1 });
    expect(turn!.botlink).toMatchObject({ outcome: 'answer', httpStatus: 200 });
    expect(Object.keys(turn!.timings as object)).toContain('botlink');
  });

  it('phone without an integration: the knowledge base answers, rendered for speech', async () => {
    credentials = undefined;
    const runtime = makeRuntime();
    const result = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-1', text: 'How fast do you ship my order?', language: 'en' });
    expect(result).toMatchObject({ cancelled: false, source: 'knowledge_base' });
    if (!result.cancelled) expect(result.text).toContain('two working days');
    expect(calls).toHaveLength(0);
  });

  it('a streaming AI: pieces are spoken through the spoken turn, rendered for speech, within the spoken length; the rest is unsent', async () => {
    credentials = undefined;
    // An AI that streams its sentences as an LLM adapter does (the adapter itself is tested over HTTPS).
    const sentence = (i: number) => `Sentence number ${i} tells you about **shipping** for 5-7 days, and more words here.`;
    const ai: AiPort = {
      name: 'openai',
      async step(input) {
        const all = Array.from({ length: 12 }, (_, i) => sentence(i + 1));
        all.slice(0, 11).forEach((s) => input.onText?.(s));
        const text = all.join(' ');
        return { kind: 'answer', text, source: 'ai', streamed: text.length - all[11]!.length };
      },
    };
    const runtime = makeRuntime({ ai });
    const heard: string[] = [];
    const result = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-stream', text: 'Tell me all', language: 'en', speech: spokenTurn(heard) });
    if (result.cancelled) throw new Error('cancelled');
    expect(heard[0]).toBe('Sentence number 1 tells you about shipping for 5 to 7 days, and more words here.');
    expect(heard.join(' ').length).toBeLessThanOrEqual(MAX_SPOKEN_CHARS);
    expect(heard.length).toBeLessThan(11);
    // The spoken length is used up: nothing more is said, and the whole reply is what was heard.
    expect(result.unsent).toBe('');
    expect(result.text).toBe(heard.join(' '));
  });

  it('without a spoken turn the same AI answers whole: unsent is the whole reply', async () => {
    credentials = undefined;
    const ai: AiPort = {
      name: 'openai',
      async step(input) {
        input.onText?.('Spoken early.');
        return { kind: 'answer', text: 'Spoken early. And the rest.', source: 'ai', streamed: input.onText ? 14 : 0 };
      },
    };
    const runtime = makeRuntime({ ai });
    const whole = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-whole', text: 'Hi', language: 'en' });
    expect(whole).toMatchObject({ text: 'Spoken early. And the rest.', unsent: 'Spoken early. And the rest.' });
    const heard: string[] = [];
    const streamed = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-part', text: 'Hi', language: 'en', speech: spokenTurn(heard) });
    expect(heard).toEqual(['Spoken early.']);
    expect(streamed).toMatchObject({ text: 'Spoken early. And the rest.', unsent: 'And the rest.' });
  });

  it('nothing fitting: the honest fallback sentence in the customer\'s language', async () => {
    credentials = undefined;
    const runtime = makeRuntime();
    const result = await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-1', text: 'Kunnen jullie mijn fiets repareren?', language: 'nl' });
    expect(result).toMatchObject({ source: 'fallback', text: phrase('dont_know', 'nl') });
  });

  it('an integrator error never breaks the conversation: the AI answers', async () => {
    answer = () => ({ status: 500, body: { error: 'down' } });
    const runtime = makeRuntime();
    const result = await runtime.handleMessage({ workspaceId, channel: 'whatsapp', externalId: 'wa-err', text: 'Is shipping free?', language: 'en' });
    expect(result).toMatchObject({ cancelled: false, source: 'knowledge_base' });
  });

  it('barge-in: the older turn is cancelled and recorded, only the newer one answers', async () => {
    answer = (m) => ({ status: 200, body: { reply: `About ${m}` }, delayMs: m === 'first' ? 400 : 0 });
    const runtime = makeRuntime();
    const first = runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-barge', text: 'first', language: 'en' });
    await new Promise((r) => setTimeout(r, 50));
    const second = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-barge', text: 'second', language: 'en' });
    expect(await first).toMatchObject({ cancelled: true, reason: 'barge_in' });
    expect(second).toMatchObject({ cancelled: false, source: 'integrator', text: 'About second.' });
    await runtime.settled();
    const repo = sessionsRepository(get().db);
    const row = (await repo.find(workspaceId, 'phone', 'call-barge'))!;
    expect((await repo.turns(row.id)).map((t) => [t.customer_message, t.status])).toEqual([
      ['first', 'cancelled'],
      ['second', 'completed'],
    ]);
  });

  it('passivates an idle session and restores it with its history on the next message', async () => {
    const runtime = makeRuntime({ idleMs: 1_000 });
    // Times from before the message: the session counts as active from its turn's start, however long the turn took.
    const sent = Date.now();
    await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-passive', text: 'Is shipping free?', language: 'en' });
    expect(runtime.liveCount()).toBe(1);
    expect(await runtime.passivateIdle(sent + 500)).toBe(0);
    expect(await runtime.passivateIdle(Date.now() + 1_001)).toBe(1);
    expect(runtime.liveCount()).toBe(0);
    await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-passive', text: 'And how fast?', language: 'en' });
    await runtime.settled();
    const row = (await sessionsRepository(get().db).find(workspaceId, 'webchat', 'chat-passive'))!;
    const context = (row.snapshot as { context: { turnCount: number; history: { text: string }[] } }).context;
    expect(context.turnCount).toBe(2);
    expect(context.history.map((h) => h.text)).toContain('Is shipping free?');
  });

  it('open() restores a passivated session without running a turn', async () => {
    const runtime = makeRuntime({ idleMs: 1 });
    const first = await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-open', text: 'Is shipping free?', language: 'en' });
    await runtime.passivateIdle(Date.now() + 10);
    expect(runtime.liveCount()).toBe(0);
    const opened = await runtime.open({ workspaceId, channel: 'webchat', externalId: 'chat-open' });
    expect(opened.sessionId).toBe(first.sessionId);
    expect(runtime.liveCount()).toBe(1);
    await runtime.settled();
    expect((await sessionsRepository(get().db).find(workspaceId, 'webchat', 'chat-open'))!.turn_count).toBe(1);
  });

  it('a turn restored after its deadline passed does not call the integrator again', async () => {
    const { db } = get();
    const repo = sessionsRepository(db);
    // A turn that was waiting for the integrator when its process died, 10 s ago.
    const stuck = createActor(sessionMachine.provide({ actors: { callBotLink: fromPromise(() => new Promise(() => {})) } }), {
      input: { conversationId: 'wa-restore', workspaceId, channel: 'whatsapp' },
    });
    stuck.start();
    stuck.send({ type: 'message', turnId: 'lost-turn', text: 'Is shipping free?', at: Date.now() - 10_000, language: 'en' });
    const snapshot = stuck.getPersistedSnapshot();
    stuck.stop();
    const row = await repo.findOrCreate({ id: randomUUID(), workspace_id: workspaceId, channel: 'whatsapp', external_id: 'wa-restore', language: 'en', customer_phone: null, machine_version: SESSION_MACHINE_VERSION });
    await repo.saveSnapshot({ id: row.id, state: 'turn.asking', status: 'active', snapshot, machineVersion: SESSION_MACHINE_VERSION });

    const runtime = makeRuntime();
    const next = await runtime.handleMessage({ workspaceId, channel: 'whatsapp', externalId: 'wa-restore', text: 'Hello again', language: 'en' });
    expect(next.cancelled).toBe(false);
    await runtime.settled();
    const turns = await repo.turns(row.id);
    const lost = turns.find((t) => t.id === 'lost-turn');
    // Either finished as a timeout without a request, or cancelled by the new message: never a late call.
    expect(calls.map((c) => c.message)).not.toContain('Is shipping free?');
    if (lost?.status === 'completed') expect(lost.botlink).toMatchObject({ reason: 'timeout' });
  });

  it('a session saved by an older machine (v2) is restored with its history through the runtime', async () => {
    const { db } = get();
    const repo = sessionsRepository(db);
    const v2 = JSON.parse(readFileSync(new URL('../fixtures/session-snapshots/v2.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> };
    const snapshot = { ...v2, context: { ...v2.context, workspaceId, sessionId: 'chat-old' } };
    const row = await repo.findOrCreate({ id: randomUUID(), workspace_id: workspaceId, channel: 'webchat', external_id: 'chat-old', language: 'en', customer_phone: null, machine_version: 2 });
    await repo.saveSnapshot({ id: row.id, state: 'idle', status: 'active', snapshot, machineVersion: 2 });
    const runtime = makeRuntime();
    await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-old', text: 'And how fast?', language: 'en' });
    await runtime.settled();
    const saved = (await repo.find(workspaceId, 'webchat', 'chat-old'))!;
    expect(saved.machine_version).toBe(SESSION_MACHINE_VERSION);
    const context = (saved.snapshot as { context: { conversationId: string; turnCount: number; history: { text: string }[] } }).context;
    expect(context.conversationId).toBe('chat-old');
    expect(context.turnCount).toBe(2);
    expect(context.history.map((h) => h.text)).toContain('Is shipping free?');
  });

  it('phone sessions nobody continues are ended by the sweep; a live call and a recent hand-back are not', async () => {
    const { db } = get();
    credentials = undefined;
    const status = async (externalId: string) =>
      (await db.selectFrom('sessions').select('status').where('workspace_id', '=', workspaceId).where('external_id', '=', externalId).executeTakeFirstOrThrow()).status;
    // Handed back on SIGTERM: the stopping process gives its leases back and keeps the sessions open for a reconnect.
    const stopping = makeRuntime({ instanceId: 'engine-stopping' });
    await stopping.open({ workspaceId, channel: 'phone', externalId: 'call-gone', hold: true });
    await stopping.open({ workspaceId, channel: 'phone', externalId: 'call-back-soon', hold: true });
    await stopping.stop(100);
    // A live call in another process, quiet for as long.
    const live = makeRuntime({ instanceId: 'engine-live' });
    await live.open({ workspaceId, channel: 'phone', externalId: 'call-live', hold: true });
    await db
      .updateTable('sessions')
      .set({ updated_at: new Date(Date.now() - 10 * 60_000) })
      .where('workspace_id', '=', workspaceId)
      .where('external_id', 'in', ['call-gone', 'call-live'])
      .execute();

    expect(await live.endAbandonedCalls(5 * 60_000)).toBe(1);
    expect(await status('call-gone')).toBe('ended');
    expect(await status('call-live')).toBe('active');
    expect(await status('call-back-soon')).toBe('active');
    // The live call goes on.
    const turn = await live.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-live', text: 'How fast do you ship my order?', language: 'en' });
    expect(turn.cancelled).toBe(false);
  });

  it('two engines on one database never run a turn of one session at the same time', async () => {
    answer = (m) => ({ status: 200, body: { reply: `Reply to ${m}` }, delayMs: 150 });
    const a = makeRuntime({ instanceId: 'engine-a' });
    const b = makeRuntime({ instanceId: 'engine-b' });
    const results = await Promise.all([
      a.handleMessage({ workspaceId, channel: 'whatsapp', externalId: 'wa-shared', text: 'm1', language: 'en' }),
      b.handleMessage({ workspaceId, channel: 'whatsapp', externalId: 'wa-shared', text: 'm2', language: 'en' }),
    ]);
    expect(results.map((r) => r.cancelled)).toEqual([false, false]);
    const sorted = calls.filter((c) => c.message === 'm1' || c.message === 'm2').sort((x, y) => x.start - y.start);
    expect(sorted).toHaveLength(2);
    expect(sorted[1]!.start).toBeGreaterThanOrEqual(sorted[0]!.end);
    await a.settled();
    await b.settled();
    const row = (await sessionsRepository(get().db).find(workspaceId, 'whatsapp', 'wa-shared'))!;
    expect(row.turn_count).toBe(2);
    expect(row.lease_owner).toBeNull();
  });

  it('a held conversation (the phone) takes its lease once at open, keeps it through its turns and gives it back at end', async () => {
    const repo = sessionsRepository(get().db);
    let acquired = 0;
    const runtime = makeRuntime({ instanceId: 'engine-held', sessions: { ...repo, acquireLease: (...args) => (acquired++, repo.acquireLease(...args)) } });
    const { sessionId } = await runtime.open({ workspaceId, channel: 'phone', externalId: 'call-held', hold: true });
    expect(acquired).toBe(1);
    for (const text of ['one', 'two', 'three']) {
      expect(await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-held', text, language: 'en' })).toMatchObject({ cancelled: false });
    }
    await runtime.settled();
    expect(acquired).toBe(1);
    const during = (await repo.findById(workspaceId, sessionId))!;
    expect(during).toMatchObject({ lease_owner: 'engine-held', turn_count: 3 });
    // Not passivated while held: the call is still connected.
    expect(await runtime.passivateIdle(Date.now() + 24 * 3_600_000)).toBe(0);

    // Another engine's message for this session waits for the lease: it gets it once the call has ended.
    const other = makeRuntime({ instanceId: 'engine-other', leaseWaitMs: 5_000 });
    let otherDone = false;
    const late = other.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-held', text: 'four', language: 'en' }).then((r) => ((otherDone = true), r));
    await new Promise((r) => setTimeout(r, 150));
    expect(otherDone).toBe(false);
    await runtime.end(workspaceId, 'phone', 'call-held');
    expect(await late).toMatchObject({ cancelled: false });
    await other.settled();
    expect((await repo.findById(workspaceId, sessionId))!).toMatchObject({ lease_owner: null });
  });

  it('a held lease is renewed while the call lasts; one lost meanwhile is taken per turn again', async () => {
    const repo = sessionsRepository(get().db);
    let acquired = 0;
    // A 1 s lease renewed every third of it: a database round trip slowed by a loaded machine stays well inside it.
    const runtime = makeRuntime({ instanceId: 'engine-renew', leaseMs: 1_000, sessions: { ...repo, acquireLease: (...args) => (acquired++, repo.acquireLease(...args)) } });
    const { sessionId } = await runtime.open({ workspaceId, channel: 'phone', externalId: 'call-renew', hold: true });
    const first = (await repo.findById(workspaceId, sessionId))!.lease_until!.getTime();
    await new Promise((r) => setTimeout(r, 2_300));
    const renewed = (await repo.findById(workspaceId, sessionId))!;
    expect(renewed.lease_owner).toBe('engine-renew');
    expect(renewed.lease_until!.getTime()).toBeGreaterThan(first);

    // Another process took the lease after it expired (this one stalled): the next renewal finds it gone.
    await get().db.updateTable('sessions').set({ lease_owner: 'engine-thief', lease_until: new Date(Date.now() - 1) }).where('id', '=', sessionId).execute();
    await new Promise((r) => setTimeout(r, 800));
    expect(acquired).toBe(1);
    await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-renew', text: 'still there?', language: 'en' });
    expect(acquired).toBe(2);
    await runtime.settled();
    // Taken per turn again: given back at the turn's end.
    expect((await repo.findById(workspaceId, sessionId))!.lease_owner).toBeNull();
  });

  it('turn ends of many sessions at once are written together, each with its own turn row', async () => {
    const repo = sessionsRepository(get().db);
    const batches: number[] = [];
    // The database is slow until every reply is out, so the turn ends pile up behind the first writes.
    let replied!: () => void;
    const allReplied = new Promise<void>((resolve) => (replied = resolve));
    const runtime = makeRuntime({ sessions: { ...repo, saveTurns: async (inputs) => (batches.push(inputs.length), await allReplied, await repo.saveTurns(inputs)) } });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => runtime.handleMessage({ workspaceId, channel: 'whatsapp', externalId: `wa-batch-${i}`, text: `order ${i}?`, language: 'en' })));
    replied();
    await runtime.settled();
    // The first write goes at once; the other eleven wait for it and go in one statement.
    expect(batches).toEqual([1, 11]);
    for (const [i, result] of results.entries()) {
      const row = (await repo.findById(workspaceId, result.sessionId))!;
      expect(row).toMatchObject({ turn_count: 1, lease_owner: null, state: 'idle' });
      const turns = await repo.turns(row.id);
      expect(turns.map((t) => [t.customer_message, t.status, t.source])).toEqual([[`order ${i}?`, 'completed', 'integrator']]);
      expect(turns[0]!.started_at).toBeInstanceOf(Date);
    }
  });

  it('forward handoff: the customer is told and the team gets a notification', async () => {
    answer = () => ({ status: 200, body: { reply: 'We will check your refund.', handoff: 'forward' } });
    const runtime = makeRuntime();
    const result = await runtime.handleMessage({ workspaceId, channel: 'whatsapp', externalId: 'wa-forward', text: 'Where is my refund?', language: 'en' });
    expect(result).toMatchObject({ source: 'integrator', handoff: { kind: 'forward', connected: false } });
    if (!result.cancelled) expect(result.text).toBe(`We will check your refund. ${phrase('handoff_forward', 'en')}`);
    const notes = await sessionsRepository(get().db).notifications(workspaceId, 10);
    expect(notes.find((n) => n.message === 'Where is my refund?')).toMatchObject({ kind: 'forward' });
  });

  it('human handoff on the phone connects only while the team is available', async () => {
    answer = () => ({ status: 200, body: { reply: 'One moment.', handoff: 'human' } });
    const repo = sessionsRepository(get().db);
    const runtime = makeRuntime();
    await repo.setTeamAvailable(workspaceId, false);
    const away = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-h1', text: 'A person please', language: 'en' });
    expect(away).toMatchObject({ handoff: { kind: 'human', connected: false } });
    await repo.setTeamAvailable(workspaceId, true);
    const there = await runtime.handleMessage({ workspaceId, channel: 'phone', externalId: 'call-h2', text: 'A person please', language: 'en' });
    expect(there).toMatchObject({ handoff: { kind: 'human', connected: true } });
  });

  it('streams what happens to listeners', async () => {
    const runtime = makeRuntime();
    const first = await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-stream', text: 'Is shipping free?', language: 'en' });
    await runtime.settled();
    const events: string[] = [];
    runtime.subscribe(first.sessionId, (e) => events.push(e.type));
    await runtime.handleMessage({ workspaceId, channel: 'webchat', externalId: 'chat-stream', text: 'How fast?', language: 'en' });
    await runtime.settled();
    // The chat's messages (the customer's and the reply) are shown once the turn is written.
    expect(events).toEqual(['turn_started', 'reply', 'turn_completed', 'message', 'message']);
  });
});

describe('session runtime stop', () => {
  it('refuses new turns once stopping', async () => {
    const { openTestDatabase } = await import('../helpers/db.ts');
    const database = await openTestDatabase('pglite');
    const runtime = createSessionRuntime({
      renderers: channelRenderers,
      sessions: sessionsRepository(database.db),
      credentials: async () => undefined,
      botlink: createBotLinkClient({ http: new GuardedClient() }),
      tools: createToolsClient({ http: new GuardedClient() }),
      knowledge: createKnowledgeService({ knowledge: knowledgeRepository(database.db) }),
      ai: createAi(null),
      logger: createLogger('silent'),
    });
    await runtime.stop(10);
    await expect(runtime.handleMessage({ workspaceId: randomUUID(), channel: 'webchat', externalId: 'x', text: 'hi' })).rejects.toThrow('stopping');
    await database.close();
  });
});
