/**
 * Live events across engines (docs/architecture.md, "Live events across engines"): what happens in a conversation,
 * and inbox changes, reach every stream that watches them, whichever engine the stream and the conversation are on.
 *
 * - Local listeners get an event at once, in the process that published it.
 * - An event whose key another engine watches (its streams registered the key in `live_watches`) is also written to
 *   `live_events`, in groups, with a NOTIFY at commit. Keys nobody elsewhere watches cost no write: a phone turn with
 *   no dashboard open on another engine writes nothing here.
 * - Every engine reads the events of the others after a NOTIFY, and every LIVE_POLL_MS anyway: the backstop for a
 *   lost LISTEN connection and for a transaction pooler, which cannot hold one. A read takes what is newer than the
 *   last id it saw. Ids come from a sequence, and a transaction that took a smaller id may commit after a larger one
 *   was read: an id missing below the newest one read is a gap, asked for again by every read for LIVE_LOOKBACK_MS.
 *   (Reading the whole lookback again on every read, as before, re-read thousands of rows per NOTIFY at the phone
 *   benchmark's load, and a full batch of old rows kept the newest out of reach for seconds.)
 * - Rows older than LIVE_RETENTION_MS are removed; a watch lives LIVE_WATCH_MS and is renewed while its stream is open.
 */
import type { Listen } from '../../db/database.ts';
import { LIVE_CHANNEL, LIVE_WATCH_NOTICE, type LiveEventsRepository } from '../../db/repositories/live-events.repository.ts';
import { errorText } from '../errors.ts';
import type { Logger } from '../log.ts';

/**
 * `team`: events for one user of the team, keyed by their id (a note's @mention of them). `visitor`: a web chat's
 * agent-typing signs, keyed by workspace, that wake the widget's long polls (src/channels/webchat/visitor-side.ts).
 * `presence`: a person of the team became available, away or offline, keyed by workspace (src/inbox/presence.ts).
 */
export type LiveTopic = 'session' | 'inbox' | 'team' | 'visitor' | 'presence';

/** How often every engine reads the others' events without a NOTIFY, ms. */
export const LIVE_POLL_MS = 1_000;
/** How long the events written in one group wait for more, ms. */
export const LIVE_WRITE_LINGER_MS = 10;
/** An id missing below the newest read is asked for again this long (its transaction may commit late), ms. */
export const LIVE_LOOKBACK_MS = 10_000;
/** Gaps wider than this (rows purged while an engine was away) are not tracked id by id. */
const MAX_GAP_IDS = 5_000;
/** A watch's lifetime; renewed at a third of it while the stream is open, ms. */
export const LIVE_WATCH_MS = 60_000;
/** How often an engine reads what the other engines watch, ms. */
export const LIVE_WATCHES_REFRESH_MS = 1_000;
/** Events are kept this long, ms. */
export const LIVE_RETENTION_MS = 5 * 60_000;
/** Most events read at once. */
const READ_BATCH = 500;

type Listener = (event: unknown) => void;

export interface LiveBusDeps {
  events: LiveEventsRepository;
  logger: Logger;
  /** This engine's name (the session runtime's instance id). */
  engine: string;
  /** LISTEN for the NOTIFY that announces new events; absent: polling only. */
  listen?: Listen;
  pollMs?: number;
  watchesRefreshMs?: number;
  now?: () => number;
}

export function createLiveBus(deps: LiveBusDeps) {
  const { events, logger, engine } = deps;
  const now = deps.now ?? Date.now;
  const pollMs = deps.pollMs ?? LIVE_POLL_MS;
  const watchesRefreshMs = deps.watchesRefreshMs ?? LIVE_WATCHES_REFRESH_MS;
  const listeners = new Map<string, Set<Listener>>();
  /** Keys other engines watch, as last read. */
  let watchedElsewhere = new Set<string>();
  let pending: { topic: string; key: string; payload: unknown }[] = [];
  let writeTimer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();
  /** The newest id read. */
  let cursor = 0n;
  /** Ids below the cursor not seen yet, with when they were first missed. */
  const gaps = new Map<string, number>();
  let reading: Promise<void> | null = null;
  let readAgain = false;
  const timers: NodeJS.Timeout[] = [];
  let stopListening: (() => Promise<void>) | null = null;
  let stopped = false;

  const keyOf = (topic: LiveTopic, key: string) => `${topic}\u0000${key}`;

  function deliver(topic: LiveTopic | string, key: string, payload: unknown): void {
    for (const listener of listeners.get(`${topic}\u0000${key}`) ?? []) {
      try {
        listener(payload);
      } catch (err) {
        logger.warn({ err: errorText(err), topic, key }, 'a live event listener failed');
      }
    }
  }

  function scheduleWrite(): void {
    if (writeTimer || stopped) return;
    writeTimer = setTimeout(() => {
      writeTimer = null;
      const batch = pending;
      pending = [];
      writing = writing
        .then(() => events.append(engine, batch))
        .catch((err: unknown) => logger.warn({ err: errorText(err), events: batch.length }, 'live events could not be written; other engines miss them'));
    }, LIVE_WRITE_LINGER_MS);
  }

  async function read(): Promise<void> {
    if (reading) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        const [late, rows] = await Promise.all([events.byIds([...gaps.keys()], engine), events.after(String(cursor), engine, READ_BATCH)]);
        const t = now();
        for (const row of late) gaps.delete(row.id);
        for (const row of rows) {
          const id = BigInt(row.id);
          if (id - cursor > 1n && id - cursor <= BigInt(MAX_GAP_IDS)) for (let missing = cursor + 1n; missing < id; missing++) gaps.set(String(missing), t);
          cursor = id;
        }
        for (const row of [...late, ...rows]) if (row.origin !== engine) deliver(row.topic, row.key, row.payload);
        // An id still missing after the lookback was rolled back, or never will be read.
        for (const [id, at] of gaps) if (t - at >= LIVE_LOOKBACK_MS) gaps.delete(id);
        if (rows.length === READ_BATCH) readAgain = true;
      } while (readAgain && !stopped);
    })()
      .catch((err: unknown) => logger.warn({ err: errorText(err) }, 'live events could not be read; trying again'))
      .finally(() => {
        reading = null;
      });
    return reading;
  }

  async function refreshWatches(): Promise<void> {
    const rows = await events.watchedByOthers(engine, new Date(now()));
    watchedElsewhere = new Set(rows.map((r) => `${r.topic}\u0000${r.key}`));
  }

  function watchedKeys(): { topic: string; key: string }[] {
    return [...listeners.keys()].map((k) => {
      const [topic, key] = k.split('\u0000') as [string, string];
      return { topic, key };
    });
  }

  async function startListening(): Promise<void> {
    if (!deps.listen || stopped) return;
    try {
      stopListening = await deps.listen(
        LIVE_CHANNEL,
        // New events are read; a new watch makes this engine send that key's events from now on. Each NOTIFY says
        // which (reading the watches at every event's NOTIFY doubled the queries at the phone benchmark's load).
        (payload) => {
          if (payload === LIVE_WATCH_NOTICE) void refreshWatches().catch(() => {});
          else void read();
        },
        (err) => {
          stopListening = null;
          logger.warn({ err: errorText(err) }, 'the LISTEN connection for live events was lost; polling until it is back');
          // Whatever was announced meanwhile is read by the poll; listen again shortly.
          const retry = setTimeout(() => void startListening(), pollMs);
          retry.unref();
        },
      );
    } catch (err) {
      logger.warn({ err: errorText(err) }, 'could not LISTEN for live events; polling only');
      const retry = setTimeout(() => void startListening(), 5 * pollMs);
      retry.unref();
    }
  }

  return {
    /** Delivers here at once; also to the other engines when one of them watches this key. */
    publish(topic: LiveTopic, key: string, payload: unknown): void {
      deliver(topic, key, payload);
      if (!watchedElsewhere.has(keyOf(topic, key))) return;
      pending.push({ topic, key, payload });
      scheduleWrite();
    },

    /** A listener for one key; registers the watch so other engines send theirs. Returns the unsubscribe. */
    subscribe(topic: LiveTopic, key: string, listener: Listener): () => void {
      const k = keyOf(topic, key);
      let set = listeners.get(k);
      if (!set) {
        listeners.set(k, (set = new Set()));
        void events.watch(engine, [{ topic, key }], new Date(now() + LIVE_WATCH_MS)).catch((err: unknown) =>
          logger.warn({ err: errorText(err), topic, key }, 'a live watch could not be written; other engines may not send its events'),
        );
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size > 0 || listeners.get(k) !== set) return;
        listeners.delete(k);
        void events.unwatch(engine, [{ topic, key }]).catch(() => {});
      };
    },

    async start(): Promise<void> {
      cursor = BigInt(await events.newestId());
      await refreshWatches().catch(() => {});
      await startListening();
      const every = (ms: number, work: () => Promise<void>, what: string) => {
        const timer = setInterval(() => void work().catch((err: unknown) => logger.warn({ err: errorText(err) }, what)), ms);
        timer.unref();
        timers.push(timer);
      };
      every(pollMs, read, 'live events poll failed');
      every(watchesRefreshMs, refreshWatches, 'live watches could not be read');
      every(LIVE_WATCH_MS / 3, () => events.watch(engine, watchedKeys(), new Date(now() + LIVE_WATCH_MS)), 'live watches could not be renewed');
      every(LIVE_RETENTION_MS / 5, async () => {
        await events.purge(new Date(now() - LIVE_RETENTION_MS));
        await events.purgeWatches(new Date(now()));
      }, 'old live events could not be removed');
    },

    async stop(): Promise<void> {
      stopped = true;
      for (const t of timers) clearInterval(t);
      if (writeTimer) clearTimeout(writeTimer);
      writeTimer = null;
      if (pending.length) writing = writing.then(() => events.append(engine, pending.splice(0))).catch(() => {});
      await writing;
      await events.unwatch(engine, watchedKeys()).catch(() => {});
      await stopListening?.().catch(() => {});
    },

    /** Reads the other engines' events now (tests). */
    read,
  };
}

export type LiveBus = ReturnType<typeof createLiveBus>;
