import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.ts';
import type { BotLinkSummary, KnowledgeSummary, SessionEmitted } from '../../machines/session-types.ts';
import type { ToolSpec } from '../../src/botlink/tools-types.ts';
import { persistedSnapshot } from '../../src/sessions/turn-record.ts';

const handled: BotLinkSummary = {
  outcome: 'answer', reason: 'answer', reply: 'Your order ships tomorrow.', handled: true, handoff: null, customer: {}, problems: [], httpStatus: 200, latencyMs: 40, firstByteMs: 30,
};

function phoneSession(botlink: () => Promise<BotLinkSummary>) {
  const machine = sessionMachine.provide({
    actors: {
      callBotLink: fromPromise(botlink),
      searchKnowledge: fromPromise(async (): Promise<KnowledgeSummary> => ({ passages: [], confident: false, tookMs: 1 })),
      loadTools: fromPromise(async (): Promise<ToolSpec[]> => []),
    },
  });
  const actor = createActor(machine, { input: { conversationId: 'CA1', workspaceId: 'w1', channel: 'phone', customerPhone: '+31600000000' } });
  const replies: SessionEmitted[] = [];
  actor.on('reply', (e) => replies.push(e));
  actor.start();
  return { machine, actor, replies };
}

const stored = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('the snapshot stored with a turn end', () => {
  it('is what XState persists, for an idle session after turns', async () => {
    const { actor, replies } = phoneSession(async () => handled);
    for (const [i, text] of ['Where is my order?', 'And the invoice?', 'Thanks'].entries()) {
      actor.send({ type: 'message', turnId: `t${i}`, text, at: 1_000 + i, language: 'en' });
      await waitFor(actor, (s) => s.matches({ conversation: 'idle' }) && replies.length === i + 1);
    }
    expect(stored(persistedSnapshot(actor))).toEqual(stored(actor.getPersistedSnapshot()));
  });

  it('restores the session with its history', async () => {
    const { machine, actor, replies } = phoneSession(async () => handled);
    actor.send({ type: 'message', turnId: 't1', text: 'Where is my order?', at: 1_000, language: 'en' });
    await waitFor(actor, (s) => s.matches({ conversation: 'idle' }) && replies.length === 1);
    const restored = createActor(machine, { snapshot: stored(persistedSnapshot(actor)) as never, input: { conversationId: 'CA1', workspaceId: 'w1', channel: 'phone' } });
    restored.start();
    expect(restored.getSnapshot().matches({ conversation: 'idle' })).toBe(true);
    expect(restored.getSnapshot().context.history).toEqual([
      { role: 'customer', text: 'Where is my order?' },
      { role: 'assistant', text: 'Your order ships tomorrow.' },
    ]);
    expect(restored.getSnapshot().context.turnCount).toBe(1);
  });

  it("is XState's own while a turn runs (its actors are part of it)", async () => {
    const { actor } = phoneSession(() => new Promise<BotLinkSummary>(() => {}));
    actor.send({ type: 'message', turnId: 't1', text: 'Where is my order?', at: 1_000, language: 'en' });
    await waitFor(actor, (s) => s.matches({ conversation: { turn: 'gathering' } }));
    const persisted = stored(persistedSnapshot(actor)) as { children: Record<string, unknown> };
    expect(Object.keys(persisted.children).length).toBeGreaterThan(0);
    expect(persisted).toEqual(stored(actor.getPersistedSnapshot()));
  });
});
