/**
 * The summaries a process keeps (src/inbox/summary.ts, createSummaries): one per conversation while its last message is
 * the same, at most `maxCached` conversations, the least recently asked going first. Pure: a counting model, a budget
 * whose clock stands still.
 */
import { describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/rate-limiter.ts';
import { SUMMARY_RATE_LIMIT } from '../../src/inbox/limits.ts';
import { createSummaries, type SummaryLine } from '../../src/inbox/summary.ts';
import { createLogger } from '../../src/log.ts';

const lines: SummaryLine[] = [
  { from: 'customer', text: 'Where is order 5?' },
  { from: 'bot', text: 'Let me check.' },
];

function setup(maxCached: number) {
  const asked: string[] = [];
  const summaries = createSummaries({
    complete: async (messages) => {
      asked.push(String(messages[1]?.content));
      return `Summary ${asked.length}`;
    },
    logger: createLogger('silent'),
    limiter: createRateLimiter(SUMMARY_RATE_LIMIT, { now: () => 0 }),
    maxCached,
  });
  const of = (sessionId: string, lastId = 'm2') => summaries.of({ workspaceId: 'ws', sessionId, language: 'en', lastId }, lines);
  return { summaries, asked, of };
}

describe('the summaries a process keeps', () => {
  it('are at most maxCached conversations; the least recently asked goes first and is written again when asked', async () => {
    const { summaries, asked, of } = setup(2);
    await of('a');
    await of('b');
    await of('a'); // a is now the most recently asked
    await of('c'); // b goes
    expect(summaries.size()).toBe(2);
    expect(asked).toHaveLength(3);
    expect((await of('a')).text).toBe('Summary 1');
    expect((await of('b')).text).toBe('Summary 4');
    expect(asked).toHaveLength(4);
  });

  it('keep one summary per conversation: another last message replaces it', async () => {
    const { summaries, asked, of } = setup(10);
    await of('a', 'm2');
    expect((await of('a', 'm3')).text).toBe('Summary 2');
    expect(summaries.size()).toBe(1);
    expect((await of('a', 'm3')).text).toBe('Summary 2');
    expect(asked).toHaveLength(2);
  });
});
