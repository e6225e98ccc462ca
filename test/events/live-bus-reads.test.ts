/**
 * How an engine reads the other engines' live events (src/events/live-bus.ts): what is newer than the last id read,
 * and the ids missing below it (a transaction that took a smaller id and committed later), each delivered once; a
 * burst of more than one batch does not keep the newest out of reach. The shared log is an in-memory stand-in for
 * the live_events table, so the order of commits is the test's to choose.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LiveEventRow, LiveEventsRepository } from '../../db/repositories/live-events.repository.ts';
import { createLiveBus } from '../../src/events/live-bus.ts';
import { createLogger } from '../../src/log.ts';

/** The table: rows by id; `commit` makes an id visible (ids are taken in order, committed in any order). */
function sharedLog() {
  const rows = new Map<bigint, LiveEventRow>();
  let nextId = 0n;
  const visible = (origin: string, row: LiveEventRow): LiveEventRow => ({ ...row, payload: row.origin === origin ? null : row.payload });
  const repository = {
    async append() {},
    async after(afterId: string, origin: string, limit: number) {
      return [...rows.keys()].filter((id) => id > BigInt(afterId)).sort((a, b) => (a < b ? -1 : 1)).slice(0, limit).map((id) => visible(origin, rows.get(id)!));
    },
    async byIds(ids: readonly string[], origin: string) {
      return ids.flatMap((id) => (rows.has(BigInt(id)) ? [visible(origin, rows.get(BigInt(id))!)] : []));
    },
    async newestId() {
      return String(nextId);
    },
    async purge() {},
    async watch() {},
    async unwatch() {},
    async watchedByOthers() {
      return [];
    },
    async purgeWatches() {},
  } as unknown as LiveEventsRepository;
  return {
    repository,
    /** Takes the next id (not yet visible). */
    take: () => ++nextId,
    commit(id: bigint, origin: string, text: string) {
      rows.set(id, { id: String(id), origin, topic: 'session', key: 's1', payload: { text } });
    },
  };
}

describe('an engine reads the live events of the others', () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });

  async function reader(log: ReturnType<typeof sharedLog>) {
    const bus = createLiveBus({ events: log.repository, logger: createLogger('silent'), engine: 'engine-b', pollMs: 600_000, watchesRefreshMs: 600_000 });
    await bus.start();
    stop = () => bus.stop();
    const seen: string[] = [];
    bus.subscribe('session', 's1', (event) => seen.push((event as { text: string }).text));
    return { bus, seen };
  }

  it('a burst of more than one batch within the lookback: the newest arrive at the next read, each once', async () => {
    const log = sharedLog();
    const { bus, seen } = await reader(log);
    for (let i = 1; i <= 1_200; i++) log.commit(log.take(), 'engine-a', `e${i}`);
    await bus.read();
    expect(seen).toHaveLength(1_200);
    log.commit(log.take(), 'engine-a', 'newest');
    await bus.read();
    expect(seen.at(-1)).toBe('newest');
    expect(new Set(seen).size).toBe(1_201);
  });

  it('an id committed after a larger one was read is delivered by a later read, once; its own events never', async () => {
    const log = sharedLog();
    const { bus, seen } = await reader(log);
    const slow = log.take();
    log.commit(log.take(), 'engine-a', 'fast');
    log.commit(log.take(), 'engine-b', 'mine');
    await bus.read();
    expect(seen).toEqual(['fast']);
    log.commit(slow, 'engine-c', 'late');
    log.commit(log.take(), 'engine-a', 'after');
    await bus.read();
    await bus.read();
    expect(seen).toEqual(['fast', 'late', 'after']);
  });
});
