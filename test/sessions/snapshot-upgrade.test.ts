/**
 * Older persisted session snapshots restored by the current machine (src/sessions/snapshot-upgrade.ts). The fixtures
 * were written by the machines of those versions themselves (v1: 28f9752^, v2: cebb3a4), one web chat turn each.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor } from 'xstate';
import { sessionMachine } from '../../machines/session.machine.ts';
import { SESSION_MACHINE_VERSION, type AiInput, type KnowledgeSummary } from '../../machines/session-types.ts';
import type { AiStep } from '../../src/ai/types.ts';
import { upgradeSessionSnapshot } from '../../src/sessions/snapshot-upgrade.ts';

const fixture = (v: number) => JSON.parse(readFileSync(new URL(`../fixtures/session-snapshots/v${v}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

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

describe('older session snapshots', () => {
  it.each([1, 2])('an idle v%i snapshot is restored with its history, handled by the bot, and its next turn knows the conversation', async (v) => {
    const upgraded = upgradeSessionSnapshot(fixture(v), v);
    expect(upgraded).not.toBeNull();
    const seen: AiInput[] = [];
    const actor = createActor(machine(seen), { snapshot: upgraded as never, input: { conversationId: 'ignored', workspaceId: 'w1', channel: 'webchat' } });
    actor.start();
    const restored = actor.getSnapshot();
    expect(restored.matches({ handler: 'bot', conversation: 'idle' })).toBe(true);
    expect(restored.context).toMatchObject({ conversationId: 'chat-7', turnCount: 1, agent: null, waitingSince: null, handbackAt: null, handlerRevision: 0 });
    expect(restored.context).not.toHaveProperty('sessionId');

    actor.send({ type: 'message', turnId: 'turn-2', text: 'How fast is it?', at: Date.now(), language: 'en' });
    await waitFor(actor, (s) => s.matches({ conversation: 'idle' }) && s.context.turnCount === 2, { timeout: 2_000 });
    expect(seen[0]).toMatchObject({ conversationId: 'chat-7' });
    expect(seen[0]!.history.map((t) => t.text)).toEqual(['Is shipping free?', 'Shipping is free above 50 euros.']);
    // The upgraded conversation persists as the current version does.
    expect(Object.keys(actor.getPersistedSnapshot() as object)).toEqual(expect.arrayContaining(['value', 'context']));
    actor.stop();
  });

  it('a snapshot of the current version is restored as it is', () => {
    const current = upgradeSessionSnapshot(fixture(2), 2)!;
    expect(upgradeSessionSnapshot(current, SESSION_MACHINE_VERSION)).toBe(current);
  });

  it('an older snapshot caught mid-turn, ended, or not a snapshot at all starts the session idle instead', () => {
    expect(upgradeSessionSnapshot({ ...fixture(1), value: { turn: 'asking' } }, 1)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture(2), value: { handler: 'bot', conversation: { turn: 'searching' } } }, 2)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture(2), status: 'done' }, 2)).toBeNull();
    expect(upgradeSessionSnapshot({ ...fixture(2), context: { ...(fixture(2).context as object), sessionId: 7 } }, 2)).toBeNull();
    expect(upgradeSessionSnapshot('garbage', 1)).toBeNull();
    expect(upgradeSessionSnapshot(null, 2)).toBeNull();
    expect(upgradeSessionSnapshot(fixture(2), 0)).toBeNull();
  });
});
