/** Live events across engines and what each engine's streams watch (migration 0016; src/events/live-bus.ts). */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';

export interface LiveEventRow {
  id: string;
  /** The engine that wrote it. */
  origin: string;
  topic: string;
  key: string;
  payload: unknown;
}

/** The NOTIFY channel of the live bus; the payload says what is new, the rows carry the rest. */
export const LIVE_CHANNEL = 'botlink_live';
/** The payload of a NOTIFY for new events. */
export const LIVE_EVENTS_NOTICE = 'events';
/** The payload of a NOTIFY for a new or renewed watch. */
export const LIVE_WATCH_NOTICE = 'watch';

export function liveEventsRepository(db: Db) {
  return {
    /**
     * Writes the events and announces them (LIVE_EVENTS_NOTICE), in one statement: one round trip, and the NOTIFY goes
     * out when the rows are committed. Ids follow the order given.
     */
    async append(origin: string, events: readonly { topic: string; key: string; payload: unknown }[]): Promise<void> {
      if (events.length === 0) return;
      const rows = `[${events.map((e) => `{"topic":${JSON.stringify(e.topic)},"key":${JSON.stringify(e.key)},"payload":${jsonb(e.payload)}}`).join(',')}]`;
      await sql`
        with added as (
          insert into live_events (topic, key, origin, payload)
          select e.value ->> 'topic', e.value ->> 'key', ${origin}, e.value -> 'payload'
          from jsonb_array_elements(${rows}::jsonb) with ordinality as e(value, n) order by e.n
          returning 1
        )
        select pg_notify(${LIVE_CHANNEL}, ${LIVE_EVENTS_NOTICE}) from (select count(*) from added) c`.execute(db);
    },

    /**
     * Events after `afterId`, oldest first: every engine's, so the reader sees which ids are taken, with the payload
     * of the other engines' only (`origin` is the reader).
     */
    async after(afterId: string, origin: string, limit: number): Promise<LiveEventRow[]> {
      return db
        .selectFrom('live_events')
        .select(['id', 'origin', 'topic', 'key', sql<unknown>`case when origin <> ${origin} then payload end`.as('payload')])
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
        .execute();
    },

    /** The events of these ids that exist now (ids a reader skipped because their transaction had not committed). */
    async byIds(ids: readonly string[], origin: string): Promise<LiveEventRow[]> {
      if (ids.length === 0) return [];
      return db
        .selectFrom('live_events')
        .select(['id', 'origin', 'topic', 'key', sql<unknown>`case when origin <> ${origin} then payload end`.as('payload')])
        .where('id', 'in', ids)
        .orderBy('id')
        .execute();
    },

    /** The newest event's id ('0' when there is none): where a starting engine begins to read. */
    async newestId(): Promise<string> {
      const row = await db.selectFrom('live_events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
      return row?.id == null ? '0' : String(row.id);
    },

    async purge(before: Date): Promise<void> {
      await db.deleteFrom('live_events').where('at', '<', before).execute();
    },

    /**
     * This engine watches these keys until `expiresAt` (renewed while its streams are open); the NOTIFY tells the
     * other engines to read the watches now rather than at their next look.
     */
    async watch(engine: string, keys: readonly { topic: string; key: string }[], expiresAt: Date): Promise<void> {
      if (keys.length === 0) return;
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('live_watches')
          .values(keys.map((k) => ({ topic: k.topic, key: k.key, engine, expires_at: expiresAt })))
          .onConflict((oc) => oc.columns(['topic', 'key', 'engine']).doUpdateSet({ expires_at: expiresAt }))
          .execute();
        await sql`select pg_notify(${LIVE_CHANNEL}, ${LIVE_WATCH_NOTICE})`.execute(trx);
      });
    },

    async unwatch(engine: string, keys: readonly { topic: string; key: string }[]): Promise<void> {
      for (const k of keys) {
        await db.deleteFrom('live_watches').where('topic', '=', k.topic).where('key', '=', k.key).where('engine', '=', engine).execute();
      }
    },

    /** What other engines watch now. */
    async watchedByOthers(engine: string, now: Date): Promise<{ topic: string; key: string }[]> {
      return db.selectFrom('live_watches').select(['topic', 'key']).where('engine', '<>', engine).where('expires_at', '>', now).execute();
    },

    async purgeWatches(now: Date): Promise<void> {
      await db.deleteFrom('live_watches').where('expires_at', '<', now).execute();
    },
  };
}

export type LiveEventsRepository = ReturnType<typeof liveEventsRepository>;
