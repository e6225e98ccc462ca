/**
 * The one owner of a phone turn's spoken reply (src/sessions/spoken-turn.ts): the filler, the pieces given out and
 * delivered, what was heard on an interrupt, and the end of the talk cycle.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ReplyRenderer } from '../../src/sessions/reply-renderer.ts';
import { SpokenTurn } from '../../src/sessions/spoken-turn.ts';

/** Renders as is, cut to the room given. */
const render: ReplyRenderer = ({ text }, maxChars = Number.MAX_SAFE_INTEGER) => text.slice(0, maxChars);

function turn() {
  const frames: { text: string; last: boolean; preemptible?: boolean }[] = [];
  const firstTexts: number[] = [];
  let now = 0;
  const spoken = new SpokenTurn({
    id: 't1',
    voice: { say: (text, options) => void frames.push({ text, ...options }), firstText: (ms) => void firstTexts.push(ms) },
    clock: () => now,
  });
  return { spoken, frames, firstTexts, advance: (ms: number) => (now += ms) };
}

describe('a spoken turn', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('says the filler once, preemptible, when nothing was said in time; the first text is the filler', () => {
    const { spoken, frames, firstTexts, advance } = turn();
    const fillers: number[] = [];
    spoken.startFiller(1_500, () => 'One moment.', (at) => fillers.push(at));
    advance(1_500);
    vi.advanceTimersByTime(1_500);
    expect(frames).toEqual([{ text: 'One moment.', last: true, preemptible: true }]);
    expect(fillers).toEqual([1_500]);
    expect(firstTexts).toEqual([1_500]);
    advance(500);
    expect(spoken.finish({ text: 'The answer.', unsent: 'The answer.' })).toEqual({ replyMs: 2_000, firstTextMs: 1_500, fillerAtMs: 1_500, streamed: false });
    expect(frames.at(-1)).toEqual({ text: 'The answer.', last: true });
  });

  it('streams pieces (no filler after them) and ends the talk cycle with the rest only', () => {
    const { spoken, frames } = turn();
    spoken.startFiller(1_500, () => 'One moment.');
    const piece = spoken.fit('First sentence.', 'en', render);
    expect(piece).toBe('First sentence.');
    spoken.deliver(piece!);
    vi.advanceTimersByTime(5_000);
    spoken.finish({ text: 'First sentence. The rest.', unsent: 'The rest.' });
    expect(frames).toEqual([
      { text: 'First sentence. ', last: false },
      { text: 'The rest.', last: true },
    ]);
  });

  it('once cancelled it says nothing more: no filler, no piece, no end', () => {
    const { spoken, frames } = turn();
    spoken.startFiller(1_500, () => 'One moment.');
    spoken.cancel();
    vi.advanceTimersByTime(5_000);
    const piece = spoken.fit('Too late.', 'en', render);
    spoken.deliver(piece!);
    expect(spoken.finish({ text: 'Too late.', unsent: '' })).toBeNull();
    expect(spoken.fail('Sorry.')).toBe(false);
    expect(frames).toEqual([]);
    // Given out is still counted: the session knows what the turn had begun to say.
    expect(spoken.sent).toEqual(['Too late.']);
  });

  it('what was heard on an interrupt: the bridge\'s words, else what was sent; mid-turn only once something was sent', () => {
    const { spoken } = turn();
    expect(spoken.heard()).toEqual({});
    expect(spoken.heard('Hello')).toEqual({ spoken: 'Hello' });
    spoken.fit('First sentence.', 'en', render);
    spoken.fit('Second one.', 'en', render);
    expect(spoken.heard()).toEqual({ spoken: 'First sentence. Second one.', midTurn: true });
    expect(spoken.heard('First sen')).toEqual({ spoken: 'First sen', midTurn: true });
  });

  it('the rest after tool rounds: what was said before the tools begins the answer, and only the unspoken part is left', () => {
    const { spoken } = turn();
    expect(spoken.record({ kind: 'tool_calls', calls: [], said: 'Let me look.' })).toMatchObject({ kind: 'tool_calls' });
    const step = spoken.record({ kind: 'answer', text: 'It ships today. Tracking follows.', source: 'ai', streamed: 16 });
    expect(step).toMatchObject({ text: 'Let me look. It ships today. Tracking follows.' });
    expect(spoken.rest({ answer: 'Let me look. It ships today. Tracking follows.', language: 'en', handoff: null }, render)).toBe('Tracking follows.');
  });

  it('a streamed talk cycle left open is closed with an empty last frame', () => {
    const { spoken, frames } = turn();
    expect(spoken.closeTalkCycle()).toBe(false);
    spoken.deliver(spoken.fit('Piece.', 'en', render)!);
    expect(spoken.closeTalkCycle()).toBe(true);
    expect(frames.at(-1)).toEqual({ text: '', last: true });
  });
});
