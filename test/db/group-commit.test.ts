/** Group commit (db/group-commit.ts): concurrent writes share a batch; a bad item fails alone. */
import { describe, expect, it } from 'vitest';
import { groupCommit } from '../../db/group-commit.ts';

/** A writer whose batches finish only when the test says so. */
function controlledWriter(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const release: (() => void)[] = [];
  const write = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((resolve) => release.push(resolve));
    if (items.some(fail)) throw new Error(`bad item in ${items.join(',')}`);
  };
  return { batches, write, releaseAll: () => release.splice(0).forEach((r) => r()) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('group commit', () => {
  it('a write with nothing in flight goes at once, alone', async () => {
    const w = controlledWriter();
    const commit = groupCommit({ write: w.write, concurrency: 1 });
    const done = commit.add(1);
    expect(w.batches).toEqual([[1]]);
    w.releaseAll();
    await done;
    expect(commit.stats).toEqual({ batches: 1, items: 1 });
  });

  it('writes arriving while a batch is in flight wait and go together in the next one', async () => {
    const w = controlledWriter();
    const commit = groupCommit({ write: w.write, concurrency: 1 });
    const all = [1, 2, 3, 4, 5].map((i) => commit.add(i));
    expect(w.batches).toEqual([[1]]);
    w.releaseAll();
    await tick();
    expect(w.batches).toEqual([[1], [2, 3, 4, 5]]);
    w.releaseAll();
    await Promise.all(all);
    await commit.flushed();
    expect(commit.stats).toEqual({ batches: 2, items: 5 });
  });

  it('keeps batches at most maxBatch long and runs up to `concurrency` of them at once', async () => {
    const w = controlledWriter();
    const commit = groupCommit({ write: w.write, concurrency: 2, maxBatch: 2 });
    const all = [1, 2, 3, 4, 5, 6, 7].map((i) => commit.add(i));
    expect(w.batches).toEqual([[1], [2]]);
    w.releaseAll();
    await tick();
    expect(w.batches).toEqual([[1], [2], [3, 4], [5, 6]]);
    w.releaseAll();
    await tick();
    expect(w.batches.at(-1)).toEqual([7]);
    w.releaseAll();
    await Promise.all(all);
  });

  it('one bad item fails alone: a failed batch is retried item by item', async () => {
    const w = controlledWriter((i) => i === 3);
    const commit = groupCommit({ write: w.write, concurrency: 1 });
    const first = commit.add(1);
    const rest = Promise.allSettled([2, 3, 4].map((i) => commit.add(i)));
    w.releaseAll();
    await first;
    // The batch [2,3,4] fails, then each item is written alone.
    for (let i = 0; i < 4; i++) {
      await tick();
      w.releaseAll();
    }
    const outcomes = await rest;
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('bad item in 3');
    expect(w.batches).toEqual([[1], [2, 3, 4], [2], [3], [4]]);
  });

  it('flushed() waits for everything added so far', async () => {
    const w = controlledWriter();
    const commit = groupCommit({ write: w.write, concurrency: 1 });
    void commit.add(1);
    void commit.add(2);
    let flushed = false;
    const waiting = commit.flushed().then(() => (flushed = true));
    w.releaseAll();
    await tick();
    expect(flushed).toBe(false);
    w.releaseAll();
    await waiting;
    expect(flushed).toBe(true);
    await expect(commit.flushed()).resolves.toBeUndefined();
  });

  it('answers each item with its own result, in order, also when a failed batch is retried item by item', async () => {
    const commit = groupCommit<number, string>({
      write: async (items) => {
        if (items.length > 1 && items.includes(3)) throw new Error('bad batch');
        if (items.includes(3)) throw new Error('bad item');
        return items.map((i) => `done ${i}`);
      },
    });
    const first = commit.add(1);
    const rest = [2, 3, 4].map((i) => commit.add(i).then((r) => r, (err: Error) => err.message));
    expect(await first).toBe('done 1');
    expect(await Promise.all(rest)).toEqual(['done 2', 'bad item', 'done 4']);
  });

  it('with lingerMs, a batch that is not full waits for company; a full one and flushed() do not wait', async () => {
    const batches: number[][] = [];
    const commit = groupCommit<number>({ write: async (items) => void batches.push(items), maxBatch: 3, lingerMs: 60_000 });
    const a = commit.add(1);
    const b = commit.add(2);
    await tick();
    expect(batches).toEqual([]);
    const c = commit.add(3);
    await Promise.all([a, b, c]);
    expect(batches).toEqual([[1, 2, 3]]);
    const d = commit.add(4);
    await tick();
    expect(batches).toEqual([[1, 2, 3]]);
    await commit.flushed();
    await d;
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });
});
