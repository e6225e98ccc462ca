/**
 * Older persisted session snapshots restored by the current machine (src/sessions/snapshot-upgrade.ts). The fixtures
 * were written by the machines of those versions themselves (v1: 28f9752^, v2: cebb3a4, v3: d5323ce), one web chat
 * turn each; v3-held.json is v3.json's conversation then taken over by Ann, v3-mid-turn.json its second turn caught
 * while it searched the knowledge base.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.ts';
import { SESSION_MACHINE_VERSION, type AiInput, type KnowledgeSummary, type SessionEmitted } from '../../machines/session-types.ts';
import type { AiStep } from '../../src/ai/types.ts';
import { upgradeSessionSnapshot } from '../../src/sessions/snapshot-upgrade.ts';

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/session-snapshots/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

function machine(seen: AiInput[]) {
  return sessionMachine.provide({
    actors: {
      searchKnowledge: fromPromise(async (): Promise<KnowledgeSummary> => ({ passages: [], confident: false, tookMs: 1 })),
      aiStep: fromPromise(async ({ input }: { input: AiInput }): Promise<{ step: AiStep; elapsedMs: number }> => {
        seen.push(input);
        return { step: { kind: 'answer', text: 'Within two days.', source: 'knowledge_base' }, elapsedMs: 1 };
      }),
    },
  });
}

function restore(name: string, version: number, seen: AiInput[] = []) {
  const upgraded = upgradeSessionSnapshot(fixture(name), version);
  expect(upgraded).not.toBeNull();
  const actor = createActor(machine(seen), { snapshot: upgraded as never, input: { conversationId: 'ignored', workspaceId: 'w1', channel: 'webchat' } });
  const emitted: SessionEmitted[] = [];
  actor.on('*', (e) => emitted.push(e as SessionEmitted));
  actor.start();
  return { actor, emitted };
}

const ann = { userId: '6f1c1a52-3b8e-4c39-9d0e-2f4a7b9c1d10', email: 'ann@example.com', name: 'Ann' };

describe('older session snapshots', () => {
  it('the machine is at version 4: the region of who handles the conversation is `attendant`', () => {
    expect(SESSION_MACHINE_VERSION).toBe(4);
    const actor = createActor(sessionMachine, { input: { conversationId: 'c', workspaceId: 'w1', channel: 'webchat' } }).start();
    expect(actor.getPersistedSnapshot()).toMatchObject({ value: { attendant: 'bot', conversation: 'idle' }, context: { attendantRevision: 0 } });
    actor.stop();
  });

  it.each([1, 2, 3])('an idle v%i snapshot is restored with its history, handled by the bot, and its next turn knows the conversation', async (v) => {
    const seen: AiInput[] = [];
    const { actor } = restore(`v${v}`, v, seen);
    const restored = actor.getSnapshot();
    expect(restored.matches({ attendant: 'bot', conversation: 'idle' })).toBe(true);
    expect(restored.context).toMatchObject({ conversationId: 'chat-7', turnCount: 1, agent: null, waitingSince: null, handbackAt: null, attendantRevision: 0 });
    expect(restored.context).not.toHaveProperty('sessionId');
    expect(restored.context).not.toHaveProperty('handlerRevision');

    actor.send({ type: 'message', turnId: 'turn-2', text: 'How fast is it?', at: Date.now(), language: 'en' });
    await waitFor(actor, (s) => s.matches({ conversation: 'idle' }) && s.context.turnCount === 2, { timeout: 2_000 });
    expect(seen[0]).toMatchObject({ conversationId: 'chat-7' });
    expect(seen[0]!.history.map((t) => t.text)).toEqual(['Is shipping free?', 'Shipping is free above 50 euros.']);
    // The upgraded conversation persists as the current version does.
    const persisted = actor.getPersistedSnapshot() as unknown as { value: object; context: object };
    expect(persisted.value).toEqual({ attendant: 'bot', conversation: 'idle' });
    expect(persisted.context).toMatchObject({ attendantRevision: 0 });
    expect(persisted.context).not.toHaveProperty('handlerRevision');
    actor.stop();
  });

  it('a v3 conversation held by a person comes back held by her: the customer is not answered, and her hand-back counts on', () => {
    const seen: AiInput[] = [];
    const { actor, emitted } = restore('v3-held', 3, seen);
    expect(actor.getSnapshot().matches({ attendant: 'agent', conversation: 'idle' })).toBe(true);
    expect(actor.getSnapshot().context).toMatchObject({ agent: ann, attendantRevision: 1 });

    actor.send({ type: 'message', turnId: 'turn-2', text: 'Hello Ann?', at: 1_764_000_090_000, language: 'en' });
    expect(emitted.map((e) => e.type)).toEqual(['held']);
    expect(seen).toEqual([]);

    actor.send({ type: 'handback', at: 1_764_000_100_000 });
    expect(actor.getSnapshot().matches({ attendant: 'bot' })).toBe(true);
    expect(actor.getSnapshot().context).toMatchObject({ agent: null, attendantRevision: 2 });
    expect(emitted.at(-1)).toMatchObject({ type: 'attendant_changed', handledBy: 'bot', reason: 'handback' });
    actor.stop();
  });

  it('a v3 snapshot caught mid-turn goes on with its turn, which knows the conversation so far', async () => {
    const seen: AiInput[] = [];
    const { actor, emitted } = restore('v3-mid-turn', 3, seen);
    await waitFor(actor, (s) => s.matches({ attendant: 'bot', conversation: 'idle' }), { timeout: 2_000 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ conversationId: 'chat-7', turnId: 'turn-2' });
    expect(seen[0]!.history.map((t) => t.text)).toEqual(['Is shipping free?', 'Shipping is free above 50 euros.']);
    expect(emitted.find((e) => e.type === 'reply')).toMatchObject({ turnId: 'turn-2', text: 'Within two days.' });
    expect(actor.getSnapshot().context.turnCount).toBe(2);
    actor.stop();
  });

  it('a snapshot of the current version is restored as it is', () => {
    const current = upgradeSessionSnapshot(fixture('v3'), 3)!;
    expect(upgradeSessionSnapshot(current, SESSION_MACHINE_VERSION)).toBe(current);
  });

  it('an older snapshot caught mid-turn (v1, v2), ended, of an unknown shape or not a snapshot at all starts the session idle instead', () => {
    expect(upgradeSessionSnapshot({ ...fixture('v1'), value: { turn: 'asking' } }, 1)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture('v2'), value: { handler: 'bot', conversation: { turn: 'searching' } } }, 2)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture('v2'), status: 'done' }, 2)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture('v3'), status: 'done' }, 3)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture('v2'), context: { ...(fixture('v2').context as object), sessionId: 7 } }, 2)).toBeNull();
    // A v3 snapshot without the region or its revision is not one the v3 machine wrote.
    expect(upgradeSessionSnapshot({ ...fixture('v3'), value: { conversation: 'idle' } }, 3)).toBeNull();
    const { handlerRevision: _, ...withoutRevision } = fixture('v3').context as Record<string, unknown>;
    expect(upgradeSessionSnapshot({ ...fixture('v3'), context: withoutRevision }, 3)).toBeNull();
    expect(upgradeSessionSnapshot('garbage', 1)).toBeNull();
    expect(upgradeSessionSnapshot(null, 2)).toBeNull();
    expect(upgradeSessionSnapshot(fixture('v2'), 0)).toBeNull();
    expect(upgradeSessionSnapshot(fixture('v3'), SESSION_MACHINE_VERSION + 1)).toBeNull();
  });
});
