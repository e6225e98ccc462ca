import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.ts';
import type { AiInput, AiStep, BotLinkInput, BotLinkSummary, HandoffInput, HandoffResult, KnowledgeSummary, SessionEmitted, ToolsInput } from '../../machines/session-types.ts';
import type { Channel } from '../../src/channels-and-handoffs.ts';
import type { ToolOutcome, ToolSpec } from '../../src/botlink/tools-types.ts';
import { MAX_TOOL_ROUNDS, PHONE_CHANNEL_TIMEOUT_MS, CHANNEL_TIMEOUT_MS } from '../../src/limits.ts';

const passage = { id: 'c1', source: 'page' as const, externalId: 'shipping', title: 'Shipping', url: null, text: 'We ship within two days.', score: 0.8 };
const tool: ToolSpec = { name: 'order_status', description: 'Status of an order', parameters: { type: 'object', properties: { order: { type: 'string' } } } };

function answer(reply: string, extra: Partial<BotLinkSummary> = {}): BotLinkSummary {
  return { outcome: 'answer', reason: 'answer', reply, handled: true, handoff: null, customer: {}, problems: [], httpStatus: 200, latencyMs: 40, firstByteMs: 30, ...extra };
}
const noAnswer = (reason = 'timeout'): BotLinkSummary => ({ outcome: 'no_answer', reason, reply: null, handled: null, handoff: null, customer: {}, problems: [], httpStatus: null, latencyMs: 3500, firstByteMs: null });

/** Controllable fake I/O: records calls and their abort signals. */
function harness(opts: {
  botlink?: (input: BotLinkInput, signal: AbortSignal) => Promise<BotLinkSummary>;
  knowledge?: (signal: AbortSignal) => Promise<KnowledgeSummary>;
  tools?: ToolSpec[];
  ai?: (input: AiInput) => Promise<AiStep>;
  runTools?: (input: ToolsInput) => Promise<ToolOutcome[]>;
  handoff?: (input: HandoffInput) => Promise<HandoffResult>;
}) {
  const calls = { botlink: [] as { input: BotLinkInput; signal: AbortSignal }[], knowledge: [] as AbortSignal[], ai: [] as AiInput[], tools: [] as ToolsInput[], handoff: [] as HandoffInput[] };
  const machine = sessionMachine.provide({
    actors: {
      callBotLink: fromPromise(async ({ input, signal }: { input: BotLinkInput; signal: AbortSignal }) => {
        calls.botlink.push({ input, signal });
        return (opts.botlink ?? (async () => noAnswer()))(input, signal);
      }),
      searchKnowledge: fromPromise(async ({ signal }) => {
        calls.knowledge.push(signal);
        return (opts.knowledge ?? (async () => ({ passages: [passage], confident: true, tookMs: 3 })))(signal);
      }),
      loadTools: fromPromise(async () => opts.tools ?? []),
      aiStep: fromPromise(async ({ input }: { input: AiInput }) => {
        calls.ai.push(input);
        const step = await (opts.ai ?? (async () => ({ kind: 'answer', text: 'From the knowledge base.', source: 'knowledge_base' }) as AiStep))(input);
        return { step, elapsedMs: 5 };
      }),
      runTools: fromPromise(async ({ input }: { input: ToolsInput }) => {
        calls.tools.push(input);
        return (opts.runTools ?? (async (i: ToolsInput) => i.calls.map((c) => ({ id: c.id, name: c.name, ok: true, content: '{"status":"shipped"}', latencyMs: 10, httpStatus: 200 }))))(input);
      }),
      handoff: fromPromise(async ({ input }: { input: HandoffInput }) => {
        calls.handoff.push(input);
        return (opts.handoff ?? (async (i: HandoffInput) => ({ kind: i.kind, connected: false, sentence: 'The team will follow up.' })))(input);
      }),
    },
  });
  return { machine, calls };
}

function start(machine: typeof sessionMachine, channel: Channel) {
  const actor = createActor(machine, { input: { conversationId: 's1', workspaceId: 'w1', channel, customerPhone: '+31600000000' } });
  const emitted: SessionEmitted[] = [];
  actor.on('*', (e) => emitted.push(e as SessionEmitted));
  const errors: unknown[] = [];
  actor.subscribe({ error: (err) => errors.push(err) });
  actor.start();
  const replies = () => emitted.filter((e): e is Extract<SessionEmitted, { type: 'reply' }> => e.type === 'reply');
  const say = async (text: string, turnId = `t${emitted.length}`, at = 1_000_000) => {
    const before = replies().length;
    actor.send({ type: 'message', turnId, text, at, language: 'en' });
    await waitFor(actor, (s) => s.matches({ conversation: 'idle' }) && replies().length > before, { timeout: 2_000 });
    return replies().at(-1)!;
  };
  return { actor, emitted, replies, say, errors };
}

const deferred = <T,>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describe('phone turn (protocol §1.3)', () => {
  it('queries the bot link and the knowledge base in parallel, with the 3.5 s deadline as a timestamp', async () => {
    const release = deferred<BotLinkSummary>();
    const { machine, calls } = harness({ botlink: () => release.promise });
    const { actor, say } = start(machine, 'phone');
    const reply = say('Where is my order?', 't1', 5_000);
    await waitFor(actor, () => calls.knowledge.length === 1 && calls.botlink.length === 1);
    expect(calls.botlink[0]!.input.deadlineAt).toBe(5_000 + PHONE_CHANNEL_TIMEOUT_MS);
    release.resolve(noAnswer());
    expect((await reply).source).toBe('knowledge_base');
  });

  it('a handled answer is authoritative and used at once: the knowledge search is cancelled', async () => {
    const { machine, calls } = harness({ botlink: async () => answer('Order 12 ships tomorrow.'), knowledge: (signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))) });
    const { say } = start(machine, 'phone');
    const reply = await say('Where is order 12?');
    expect(reply).toMatchObject({ text: 'Order 12 ships tomorrow.', source: 'integrator' });
    expect(calls.knowledge[0]!.aborted).toBe(true);
    expect(calls.ai).toHaveLength(0);
  });

  it('with handled false the reply is extra context for the AI only', async () => {
    const { machine, calls } = harness({ botlink: async () => answer('Order 12: in transit', { handled: false }), ai: async () => ({ kind: 'answer', text: 'Your order is on its way.', source: 'ai' }) });
    const { say } = start(machine, 'phone');
    const reply = await say('Where is order 12?');
    expect(reply).toMatchObject({ text: 'Your order is on its way.', source: 'ai' });
    expect(calls.ai[0]!.integratorContext).toBe('Order 12: in transit');
  });

  it('with no valid answer the AI answers from the knowledge base', async () => {
    const { machine, calls } = harness({ botlink: async () => noAnswer('status') });
    const { say } = start(machine, 'phone');
    expect((await say('How fast do you ship?')).source).toBe('knowledge_base');
    expect(calls.ai[0]!.passages).toEqual([passage]);
    expect(calls.ai[0]!.integratorContext).toBeNull();
  });

  it('a failing bot-link actor never breaks the conversation (protocol §1.8)', async () => {
    const { machine } = harness({ botlink: async () => { throw new Error('boom'); } });
    const { say, errors } = start(machine, 'phone');
    expect((await say('Hello?')).source).toBe('knowledge_base');
    expect(errors).toEqual([]);
  });
});

describe('tool rounds (protocol §8: at most three a turn)', () => {
  it('runs the calls of a round together and gives the outcomes back to the AI', async () => {
    let step = 0;
    const { machine, calls } = harness({
      botlink: async () => noAnswer(),
      tools: [tool],
      ai: async () => (step++ === 0 ? { kind: 'tool_calls', calls: [{ id: 'a', name: 'order_status', args: { order: '1' } }, { id: 'b', name: 'order_status', args: { order: '2' } }] } : { kind: 'answer', text: 'Both shipped.', source: 'ai' }),
    });
    const { say } = start(machine, 'phone');
    expect((await say('Orders 1 and 2?')).text).toBe('Both shipped.');
    expect(calls.tools).toHaveLength(1);
    expect(calls.tools[0]!.calls.map((c) => c.id)).toEqual(['a', 'b']);
    expect(calls.ai[1]!.rounds[0]!.outcomes.map((o) => o.id)).toEqual(['a', 'b']);
  });

  it('after the third round the AI gets no tools and must answer', async () => {
    const { machine, calls } = harness({
      botlink: async () => noAnswer(),
      tools: [tool],
      ai: async (input) => (input.tools.length > 0 ? { kind: 'tool_calls', calls: [{ id: `c${input.rounds.length}`, name: 'order_status', args: {} }] } : { kind: 'answer', text: 'Done looking.', source: 'ai' }),
    });
    const { say } = start(machine, 'phone');
    expect((await say('Keep looking')).text).toBe('Done looking.');
    expect(calls.tools).toHaveLength(MAX_TOOL_ROUNDS);
    expect(calls.ai).toHaveLength(MAX_TOOL_ROUNDS + 1);
    expect(calls.ai.at(-1)!.tools).toEqual([]);
  });

  it('a tool call the AI makes without tools on offer is not run; the fallback answers', async () => {
    const { machine, calls } = harness({ botlink: async () => noAnswer(), tools: [], ai: async () => ({ kind: 'tool_calls', calls: [{ id: 'x', name: 'order_status', args: {} }] }) });
    const { say } = start(machine, 'phone');
    expect((await say('?')).source).toBe('fallback');
    expect(calls.tools).toHaveLength(0);
  });
});

describe('WhatsApp turn', () => {
  it('asks the bot link first with the 6 s deadline; a handled answer is the message, verbatim', async () => {
    const { machine, calls } = harness({ botlink: async () => answer('*Order 12*: shipped 🚚\nhttps://track.example/12') });
    const { say } = start(machine, 'whatsapp');
    const reply = await say('order 12?', 't1', 10_000);
    expect(reply).toMatchObject({ text: '*Order 12*: shipped 🚚\nhttps://track.example/12', source: 'integrator' });
    expect(calls.botlink[0]!.input.deadlineAt).toBe(10_000 + CHANNEL_TIMEOUT_MS);
    expect(calls.knowledge).toHaveLength(0);
  });

  it('handled false or no valid answer: the built-in AI replies', async () => {
    for (const b of [answer('we do not know', { handled: false }), noAnswer('invalid_json')]) {
      const { machine, calls } = harness({ botlink: async () => b });
      const { say } = start(machine, 'whatsapp');
      expect((await say('question')).source).toBe('knowledge_base');
      expect(calls.knowledge).toHaveLength(1);
    }
  });

  it('saves customer.email and customer.name from any valid response', async () => {
    const { machine } = harness({ botlink: async () => answer('hi', { handled: false, customer: { email: 'jan@example.nl', name: 'Jan' } }) });
    const { actor, say } = start(machine, 'whatsapp');
    await say('hello');
    expect(actor.getSnapshot().context.customer).toEqual({ phone: '+31600000000', email: 'jan@example.nl', name: 'Jan' });
  });

  it('does not save them on the phone (protocol §2.2: WhatsApp only)', async () => {
    const { machine } = harness({ botlink: async () => answer('hi', { customer: { email: 'jan@example.nl' } }) });
    const { actor, say } = start(machine, 'phone');
    await say('hello');
    expect(actor.getSnapshot().context.customer.email).toBeNull();
  });
});

describe('website chat turn', () => {
  it('uses the knowledge base only, never the bot link', async () => {
    const { machine, calls } = harness({});
    const { say } = start(machine, 'webchat');
    expect((await say('shipping?')).source).toBe('knowledge_base');
    expect(calls.botlink).toHaveLength(0);
  });
});

describe('handoff', () => {
  it('human: the handoff runs and the customer hears the reply and the sentence', async () => {
    const { machine, calls } = harness({
      botlink: async () => answer('Let me get someone.', { handoff: 'human' }),
      handoff: async (i) => ({ kind: i.kind, connected: true, sentence: 'Connecting you now.' }),
    });
    const { actor, say } = start(machine, 'phone');
    const reply = await say('I have a complaint about my order');
    expect(reply.text).toBe('Let me get someone. Connecting you now.');
    expect(reply.handoff).toEqual({ kind: 'human', connected: true, sentence: 'Connecting you now.' });
    expect(calls.handoff[0]).toMatchObject({ kind: 'human', channel: 'phone' });
    expect(actor.getSnapshot().context.handoff?.kind).toBe('human');
  });

  it('forward: the team is notified through the handoff actor', async () => {
    const { machine, calls } = harness({ botlink: async () => answer('We will look into it.', { handoff: 'forward' }) });
    const { say } = start(machine, 'whatsapp');
    expect((await say('complaint')).text).toBe('We will look into it. The team will follow up.');
    expect(calls.handoff[0]!.kind).toBe('forward');
  });

  it('no handoff without a valid answer', async () => {
    const { machine, calls } = harness({ botlink: async () => noAnswer() });
    const { say } = start(machine, 'phone');
    await say('x');
    expect(calls.handoff).toHaveLength(0);
  });
});

describe('the customer asks for a person (src/text/person-request.ts), the same on every channel', () => {
  const DONT_KNOW = "I don't know that, shall I connect you with the team?";
  const channels: Channel[] = ['phone', 'whatsapp', 'webchat'];

  it.each(channels)('%s: words that ask for a person are the handoff at once: no bot link, no search, no AI', async (channel) => {
    const { machine, calls } = harness({});
    const { say } = start(machine, channel);
    const reply = await say('Can I speak to a real person please?');
    expect(calls.handoff).toHaveLength(1);
    expect(calls.handoff[0]).toMatchObject({ kind: 'human', requestedBy: 'customer', channel, message: 'Can I speak to a real person please?', reply: '' });
    expect(reply).toMatchObject({ text: 'The team will follow up.', handoff: { kind: 'human' } });
    expect([calls.botlink.length, calls.knowledge.length, calls.ai.length]).toEqual([0, 0, 0]);
  });

  it.each(channels)('%s: yes right after the fallback offered the team is the handoff', async (channel) => {
    const { machine, calls } = harness({ ai: async () => ({ kind: 'answer', text: DONT_KNOW, source: 'fallback' }) });
    const { actor, say } = start(machine, channel);
    await say('Do you repair bicycles?');
    expect(actor.getSnapshot().context.personOffered).toBe(true);
    const reply = await say('Yes, please');
    expect(calls.handoff).toHaveLength(1);
    expect(calls.handoff[0]).toMatchObject({ kind: 'human', requestedBy: 'customer', message: 'Yes, please' });
    expect(reply.handoff).toMatchObject({ kind: 'human' });
    expect(actor.getSnapshot().context.personOffered).toBe(false);
  });

  it('the fallback the runtime says (an AI failure: empty text, source fallback) is an offer too', async () => {
    const { machine, calls } = harness({ ai: async () => { throw new Error('llm down'); } });
    const { say } = start(machine, 'whatsapp');
    await say('Do you repair bicycles?');
    await say('ja graag');
    expect(calls.handoff).toHaveLength(1);
  });

  it("any reply that offers a person counts (an integrator's or a model's)", async () => {
    const { machine, calls } = harness({ botlink: async () => answer('Wilt u een medewerker spreken?') });
    const { say } = start(machine, 'whatsapp');
    await say('Mijn fiets is kapot');
    await say('ja');
    expect(calls.handoff).toHaveLength(1);
  });

  it('no after the offer is not a handoff, and a later yes is just a yes (the offer held for one message)', async () => {
    let n = 0;
    const { machine, calls } = harness({ ai: async () => (n++ === 0 ? { kind: 'answer', text: DONT_KNOW, source: 'fallback' } : { kind: 'answer', text: 'Alright.', source: 'ai' }) });
    const { actor, say } = start(machine, 'phone');
    await say('Do you repair bicycles?');
    await say('no');
    expect(actor.getSnapshot().context.personOffered).toBe(false);
    await say('yes');
    expect(calls.handoff).toHaveLength(0);
    expect(calls.botlink.map((c) => c.input.message)).toEqual(['Do you repair bicycles?', 'no', 'yes']);
  });

  it('yes without an offer before it is an ordinary message', async () => {
    const { machine, calls } = harness({});
    const { say } = start(machine, 'webchat');
    await say('When are you open?');
    await say('yes');
    expect(calls.handoff).toHaveLength(0);
    expect(calls.ai.map((i) => i.message)).toEqual(['When are you open?', 'yes']);
  });

  it('a handoff is not an offer: yes after "the team will follow up" is an ordinary message', async () => {
    const { machine, calls } = harness({});
    const { say } = start(machine, 'whatsapp');
    await say('I want a human');
    await say('ok');
    expect(calls.handoff).toHaveLength(1);
  });

  it('phone: the caller cut the reply off before the offer was heard, so yes is no handoff', async () => {
    const { machine, calls } = harness({ ai: async () => ({ kind: 'answer', text: DONT_KNOW, source: 'fallback' }) });
    const { actor, say } = start(machine, 'phone');
    await say('Do you repair bicycles?');
    actor.send({ type: 'interrupt', spoken: "I don't know that," });
    expect(actor.getSnapshot().context.personOffered).toBe(false);
    await say('yes');
    expect(calls.handoff).toHaveLength(0);
  });

  it('the offer is in the persisted snapshot: a restored session still takes the yes', async () => {
    const { machine, calls } = harness({ ai: async () => ({ kind: 'answer', text: DONT_KNOW, source: 'fallback' }) });
    const first = start(machine, 'whatsapp');
    await first.say('Do you repair bicycles?');
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();
    expect(persisted.context.personOffered).toBe(true);
    const restored = createActor(machine, { snapshot: persisted, input: { conversationId: 's1', workspaceId: 'w1', channel: 'whatsapp' } });
    restored.start();
    restored.send({ type: 'message', turnId: 't2', text: 'yes please', at: 2 });
    await waitFor(restored, (s) => s.matches({ conversation: 'idle' }) && calls.handoff.length === 1);
    expect(calls.handoff[0]).toMatchObject({ kind: 'human', requestedBy: 'customer' });
  });
});

describe('barge-in and interrupt', () => {
  it('a newer message cancels the older turn: its work is aborted and its reply never delivered', async () => {
    const first = deferred<BotLinkSummary>();
    let n = 0;
    const { machine, calls } = harness({ botlink: () => (n++ === 0 ? first.promise : Promise.resolve(answer('Answer to the second.'))) });
    const { actor, say, replies, emitted } = start(machine, 'phone');
    actor.send({ type: 'message', turnId: 'old', text: 'first', at: 1 });
    await waitFor(actor, () => calls.botlink.length === 1);
    const reply = await say('second', 'new');
    first.resolve(answer('Stale answer to the first.'));
    await new Promise((r) => setTimeout(r, 20));
    expect(calls.botlink[0]!.signal.aborted).toBe(true);
    expect(reply.text).toBe('Answer to the second.');
    expect(replies().map((r) => r.turnId)).toEqual(['new']);
    expect(emitted.find((e) => e.type === 'turn_cancelled')).toMatchObject({ reason: 'barge_in', turn: { id: 'old' } });
  });

  it('interrupt during a turn cancels it and goes back to listening', async () => {
    const { machine, calls } = harness({ botlink: () => new Promise(() => {}) });
    const { actor, replies } = start(machine, 'phone');
    actor.send({ type: 'message', turnId: 't', text: 'x', at: 1 });
    await waitFor(actor, () => calls.botlink.length === 1);
    actor.send({ type: 'interrupt' });
    expect(actor.getSnapshot().matches({ conversation: 'idle' })).toBe(true);
    expect(calls.botlink[0]!.signal.aborted).toBe(true);
    expect(replies()).toHaveLength(0);
  });

  it('interrupt after a reply cuts the history to what the caller heard', async () => {
    const { machine } = harness({ botlink: async () => answer('One two three four five.') });
    const { actor, say } = start(machine, 'phone');
    await say('count');
    actor.send({ type: 'interrupt', spoken: 'One two' });
    expect(actor.getSnapshot().context.history.at(-1)).toEqual({ role: 'assistant', text: 'One two' });
  });

  it('interrupt while the turn was speaking its streamed reply: the turn stays in the history with what was heard', async () => {
    let asked = 0;
    const { machine, calls } = harness({ ai: async () => (asked++ === 0 ? { kind: 'answer', text: 'First reply.', source: 'ai' } : new Promise<AiStep>(() => {})) });
    const { actor, say } = start(machine, 'phone');
    await say('first question');
    const before = actor.getSnapshot().context.history;
    actor.send({ type: 'message', turnId: 'streaming', text: 'second question', at: 2, language: 'en' });
    await waitFor(actor, () => calls.ai.length === 2);
    expect(calls.ai[1]!.turnId).toBe('streaming');
    actor.send({ type: 'interrupt', spoken: 'The first part', midTurn: true });
    expect(actor.getSnapshot().matches({ conversation: 'idle' })).toBe(true);
    // The earlier reply is untouched; the interrupted turn is added with the part the caller heard.
    expect(actor.getSnapshot().context.history).toEqual([
      ...before,
      { role: 'customer', text: 'second question' },
      { role: 'assistant', text: 'The first part' },
    ]);
  });

  it('a stream cut off midway: the spoken part is the answer and the turn says why', async () => {
    const { machine } = harness({ ai: async () => ({ kind: 'answer', text: 'Your parcel left today.', source: 'ai', streamed: 23, cut: 'timeout' }) });
    const { actor, emitted, say } = start(machine, 'webchat');
    expect(await say('where is it')).toMatchObject({ text: 'Your parcel left today.', answer: 'Your parcel left today.', source: 'ai' });
    const completed = emitted.find((e) => e.type === 'turn_completed');
    expect(completed).toMatchObject({ turn: { errors: [expect.stringContaining('the stream broke off (timeout)')] } });
    expect(actor.getSnapshot().context.history.at(-1)).toEqual({ role: 'assistant', text: 'Your parcel left today.' });
  });
});

describe('failures and persistence', () => {
  it('an AI failure still answers (fallback, spoken by the runtime in the caller\'s language)', async () => {
    const { machine } = harness({ ai: async () => { throw new Error('llm down'); } });
    const { say, errors } = start(machine, 'webchat');
    expect(await say('x')).toMatchObject({ text: '', source: 'fallback' });
    expect(errors).toEqual([]);
  });

  it('a persisted snapshot restores mid-conversation with its history', async () => {
    const { machine, calls } = harness({});
    const first = start(machine, 'webchat');
    await first.say('first question');
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot()));
    first.actor.stop();
    // input is ignored when a snapshot is given; the types still ask for it.
    const restored = createActor(machine, { snapshot: persisted, input: { conversationId: 's1', workspaceId: 'w1', channel: 'webchat' } });
    const replies: SessionEmitted[] = [];
    restored.on('reply', (e) => replies.push(e));
    restored.start();
    restored.send({ type: 'message', turnId: 't2', text: 'second question', at: 2 });
    await waitFor(restored, (s) => s.matches({ conversation: 'idle' }) && replies.length === 1);
    expect(calls.ai.at(-1)!.history).toEqual([
      { role: 'customer', text: 'first question' },
      { role: 'assistant', text: 'From the knowledge base.' },
    ]);
    expect(restored.getSnapshot().context.turnCount).toBe(2);
  });

  it('end stops the session in its final state', async () => {
    const { machine } = harness({});
    const { actor } = start(machine, 'phone');
    actor.send({ type: 'end' });
    expect(actor.getSnapshot().status).toBe('done');
  });
});
