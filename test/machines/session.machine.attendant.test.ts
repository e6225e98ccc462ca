/**
 * The session statechart's attendant region (docs/architecture.md, "Who handles a conversation"): bot → waiting → agent
 * → bot, close, the hand-back deadline kept as a timestamp in the context (and honoured after a restore), the
 * customer's messages held while a person handles the conversation, and the phone left out.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.ts';
import type { AgentRef, AiStep, BotLinkInput, BotLinkSummary, HandoffInput, HandoffResult, KnowledgeSummary, SessionEmitted } from '../../machines/session-types.ts';
import type { Channel } from '../../src/channels-and-handoffs.ts';
import type { ToolOutcome, ToolSpec } from '../../src/botlink/tools-types.ts';

const ann: AgentRef = { userId: 'u-ann', email: 'ann@shop.example', name: 'Ann' };
const bob: AgentRef = { userId: 'u-bob', email: 'bob@shop.example', name: 'Bob' };
const HANDBACK_MS = 10 * 60_000;

function machineFor(calls: { botlink: BotLinkInput[] }) {
  return sessionMachine.provide({
    actors: {
      callBotLink: fromPromise(async ({ input }: { input: BotLinkInput }): Promise<BotLinkSummary> => {
        calls.botlink.push(input);
        const human = input.message.includes('damaged');
        return { outcome: 'answer', reason: 'answer', reply: human ? 'Sorry to hear that.' : `Answer: ${input.message}`, handled: true, handoff: human ? 'human' : null, customer: {}, problems: [], httpStatus: 200, latencyMs: 5, firstByteMs: 5 };
      }),
      searchKnowledge: fromPromise(async (): Promise<KnowledgeSummary> => ({ passages: [], confident: false, tookMs: 1 })),
      loadTools: fromPromise(async (): Promise<ToolSpec[]> => []),
      aiStep: fromPromise(async (): Promise<{ step: AiStep; elapsedMs: number }> => ({ step: { kind: 'answer', text: 'From the AI.', source: 'ai' }, elapsedMs: 1 })),
      runTools: fromPromise(async (): Promise<ToolOutcome[]> => []),
      handoff: fromPromise(async ({ input }: { input: HandoffInput }): Promise<HandoffResult> => ({
        kind: input.kind,
        connected: false,
        sentence: 'A colleague will reply to you here.',
        ...(input.channel === 'phone' ? {} : { waiting: { since: 5_000, handbackAt: 5_000 + HANDBACK_MS } }),
      })),
    },
  });
}

function start(channel: Channel = 'whatsapp') {
  const calls = { botlink: [] as BotLinkInput[] };
  const machine = machineFor(calls);
  const actor = createActor(machine, { input: { conversationId: 's1', workspaceId: 'w1', channel } });
  const emitted: SessionEmitted[] = [];
  actor.on('*', (e) => emitted.push(e as SessionEmitted));
  actor.start();
  const attendant = () => (actor.getSnapshot().value as { attendant: string }).attendant;
  const of = <T extends SessionEmitted['type']>(type: T) => emitted.filter((e): e is Extract<SessionEmitted, { type: T }> => e.type === type);
  async function say(text: string, at = 5_000) {
    const before = of('reply').length + of('held').length;
    actor.send({ type: 'message', turnId: `t${emitted.length}`, text, at, language: 'en' });
    await waitFor(actor, (s) => s.matches({ conversation: 'idle' }) && of('reply').length + of('held').length > before, { timeout: 2_000 });
  }
  return { actor, calls, machine, emitted, attendant, of, say };
}

describe('who handles a conversation', () => {
  it('bot → waiting (a person asked for) → agent → bot, each change emitted and counted', async () => {
    const s = start();
    expect(s.attendant()).toBe('bot');
    await s.say('My parcel arrived damaged');
    expect(s.of('reply').at(-1)!.text).toBe('Sorry to hear that. A colleague will reply to you here.');
    expect(s.attendant()).toBe('waiting');
    expect(s.actor.getSnapshot().context).toMatchObject({ waitingSince: 5_000, handbackAt: 5_000 + HANDBACK_MS, agent: null, attendantRevision: 1 });

    s.actor.send({ type: 'takeover', agent: ann, at: 6_000 });
    expect(s.attendant()).toBe('agent');
    expect(s.actor.getSnapshot().context).toMatchObject({ agent: ann, waitingSince: null, handbackAt: null, attendantRevision: 2 });
    // Another user's take-over finds no transition: Ann keeps it.
    s.actor.send({ type: 'takeover', agent: bob, at: 6_500 });
    expect(s.actor.getSnapshot().context.agent).toEqual(ann);

    s.actor.send({ type: 'handback', at: 7_000 });
    expect(s.attendant()).toBe('bot');
    expect(s.of('attendant_changed').map((e) => [e.handledBy, e.reason])).toEqual([
      ['waiting', 'wait'],
      ['agent', 'takeover'],
      ['bot', 'handback'],
    ]);
    await s.say('Where is order 5?');
    expect(s.of('reply').at(-1)!.text).toBe('Answer: Where is order 5?');
  });

  it('while waiting or held, a customer message is held: no turn, no integrator, no reply', async () => {
    const s = start();
    await s.say('My parcel arrived damaged');
    const asked = s.calls.botlink.length;
    await s.say('Hello? Anyone?');
    s.actor.send({ type: 'takeover', agent: ann, at: 6_000 });
    await s.say('Thanks Ann');
    expect(s.of('held').map((e) => e.text)).toEqual(['Hello? Anyone?', 'Thanks Ann']);
    expect(s.calls.botlink.length).toBe(asked);
    expect(s.of('reply')).toHaveLength(1);
    expect(s.actor.getSnapshot().context.turnCount).toBe(1);
  });

  it('close: from agent to closed (the bot answers the next message, which opens it again)', async () => {
    const s = start('webchat');
    s.actor.send({ type: 'takeover', agent: ann, at: 1_000 });
    s.actor.send({ type: 'close', at: 2_000 });
    expect(s.attendant()).toBe('closed');
    await s.say('One more thing');
    expect(s.attendant()).toBe('bot');
    expect(s.of('reply').at(-1)!.text).toBe('From the AI.');
    expect(s.of('attendant_changed').map((e) => e.reason)).toEqual(['takeover', 'close', 'reopened']);
  });

  it('the hand-back deadline is a timestamp in the context: not before it, once after it, also after a restore', async () => {
    const s = start();
    await s.say('My parcel arrived damaged');
    s.actor.send({ type: 'handback_due', at: 5_000 + HANDBACK_MS - 1 });
    expect(s.attendant()).toBe('waiting');

    // Persisted and restored (XState does not persist delays; the deadline travels in the context).
    const persisted = JSON.parse(JSON.stringify(s.actor.getPersistedSnapshot()));
    s.actor.stop();
    const restored = createActor(s.machine, { snapshot: persisted, input: { conversationId: 's1', workspaceId: 'w1', channel: 'whatsapp' } });
    const changes: SessionEmitted[] = [];
    restored.on('attendant_changed', (e) => changes.push(e));
    restored.start();
    expect((restored.getSnapshot().value as { attendant: string }).attendant).toBe('waiting');
    restored.send({ type: 'handback_due', at: 5_000 + HANDBACK_MS });
    expect((restored.getSnapshot().value as { attendant: string }).attendant).toBe('bot');
    expect(changes).toEqual([{ type: 'attendant_changed', handledBy: 'bot', agent: null, waitingSince: null, reason: 'handback_timeout' }]);
    expect(restored.getSnapshot().context.handbackAt).toBeNull();
  });

  it('a taken conversation has no deadline: handback_due changes nothing', async () => {
    const s = start();
    await s.say('My parcel arrived damaged');
    s.actor.send({ type: 'takeover', agent: ann, at: 6_000 });
    s.actor.send({ type: 'handback_due', at: 5_000 + 10 * HANDBACK_MS });
    expect(s.attendant()).toBe('agent');
  });

  it('the phone keeps its transfer: no waiting, no take-over', async () => {
    const s = start('phone');
    await s.say('My parcel arrived damaged');
    expect(s.attendant()).toBe('bot');
    s.actor.send({ type: 'takeover', agent: ann, at: 6_000 });
    expect(s.attendant()).toBe('bot');
    expect(s.actor.getSnapshot().context.attendantRevision).toBe(0);
  });

  it('the call ends: both regions are final and the actor is done', () => {
    const s = start('phone');
    s.actor.send({ type: 'end' });
    expect(s.actor.getSnapshot().status).toBe('done');
  });
});
