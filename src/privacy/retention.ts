/**
 * Retention per workspace (docs/privacy.md, "Retention"): conversation content older than the workspace's period is
 * deleted by a purge that one engine at a time runs (a claimed row in job_claims, which holds through a transaction
 * pooler, unlike a session advisory lock), in statements of at most PURGE_BATCH rows. A conversation still going on
 * across the boundary keeps its session and its recent turns; only what is older than the period goes. The audit
 * log's own retention is purged by the same run. A scenario's test conversations are not the workspace's to keep or
 * count: they go with their run (docs/scenarios.md).
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool } from 'kysely';
import { Counter, type Registry } from 'prom-client';
import type { Db } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import type { Logger } from '../log.ts';
import type { Audit } from './audit.ts';
import { PURGE_BATCH, PURGE_INTERVAL_MS } from './limits.ts';

const JOB = 'retention-purge';

export type Retention = ReturnType<typeof createRetention>;

export interface RetentionDeps {
  db: Db;
  audit: Audit;
  logger: Logger;
  registry?: Registry;
  /** This engine's name, written on the claim. */
  engine: string;
  batch?: number;
  intervalMs?: number;
}

/** What one purge deleted, per kind of record. */
export type Purged = Record<string, number>;

/** A table a purge step deletes from by its `id`. */
type IdTable = 'sessions' | 'session_turns' | 'session_messages' | 'webchat_conversations' | 'whatsapp_inbound_messages' | 'whatsapp_outbound_messages' | 'whatsapp_webhook_events' | 'webhook_events' | 'notifications';

/** What a purge step deletes: the rows of `table` in the workspace whose `olderBy` time is before the cutoff. */
interface OldRows<T extends IdTable> {
  table: T;
  olderBy: Extract<keyof Database[T], 'updated_at' | 'ended_at' | 'at' | 'created_at' | 'processed_at'>;
  /** How a row belongs to the workspace: its own `workspace_id`, or its session's (`session_id`). */
  owner: Extract<keyof Database[T], 'workspace_id' | 'session_id'>;
  /** A further condition an old row must meet to go; it names the row's columns by the table's name. */
  also?: (eb: ExpressionBuilder<Database, IdTable>) => Expression<SqlBool>;
}

/**
 * Each purge step, by kind of record, in order. Every step deletes by primary key from a bounded sub-select, so a
 * statement holds few locks and two runs never remove a row twice.
 */
function steps(db: Kysely<Database>, workspaceId: string, cutoff: Date) {
  // A scenario's test conversations keep their own time: they go with their run (docs/scenarios.md), never counted here.
  const inWorkspace = db.selectFrom('sessions').select('id').where('workspace_id', '=', workspaceId).where('test_run_id', 'is', null);
  const oldRows =
    <T extends IdTable>(step: OldRows<T>) =>
    (limit: number) => {
      // Each step's type pairs its table with that table's columns; the statement is built over all the tables.
      const table: IdTable = step.table;
      const { olderBy, owner, also } = step;
      return db.deleteFrom(table).where('id', 'in', (eb) => {
        const old = eb
          .selectFrom(table)
          .select('id')
          .where((w) => (owner === 'session_id' ? w('session_id', 'in', inWorkspace) : w('workspace_id', '=', workspaceId)))
          .where(sql.ref(olderBy), '<', cutoff);
        return (also ? old.where(also) : old).limit(limit);
      });
    };
  return {
    // Whole conversations that ended (or that no engine holds) before the cutoff; their turns and messages cascade.
    conversations: oldRows({
      table: 'sessions',
      olderBy: 'updated_at',
      owner: 'workspace_id',
      also: (w) =>
        w.and([
          w('sessions.test_run_id', 'is', null),
          w.or([w('sessions.status', '=', 'ended'), w('sessions.lease_until', 'is', null), w('sessions.lease_until', '<', new Date())]),
        ]),
    }),
    // A conversation going on across the boundary: its turns and messages older than the cutoff.
    turns: oldRows({ table: 'session_turns', olderBy: 'ended_at', owner: 'session_id' }),
    messages: oldRows({ table: 'session_messages', olderBy: 'at', owner: 'session_id' }),
    // A chat that became a conversation goes with that conversation.
    web_chats: oldRows({
      table: 'webchat_conversations',
      olderBy: 'created_at',
      owner: 'workspace_id',
      also: ({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('sessions as s')
              .select('s.id')
              .where('s.workspace_id', '=', workspaceId)
              .where('s.channel', '=', 'webchat')
              .where(sql<boolean>`s.external_id = webchat_conversations.id::text`),
          ),
        ),
    }),
    whatsapp_received: oldRows({ table: 'whatsapp_inbound_messages', olderBy: 'created_at', owner: 'workspace_id', also: (w) => w('whatsapp_inbound_messages.state', '<>', 'pending') }),
    whatsapp_sent: oldRows({ table: 'whatsapp_outbound_messages', olderBy: 'created_at', owner: 'workspace_id', also: (w) => w('whatsapp_outbound_messages.status', '<>', 'queued') }),
    // Meta's raw bodies the workspace's number received, once processed (a body waiting stays): the worker deletes
    // every processed body after a week, this one sooner when the workspace keeps less.
    whatsapp_raw_bodies: oldRows({ table: 'whatsapp_webhook_events', olderBy: 'processed_at', owner: 'workspace_id' }),
    // Keyed by (workspace_id, wa_id), not by id.
    whatsapp_conversations: (limit: number) =>
      db.deleteFrom('whatsapp_conversations').where(sql<boolean>`(workspace_id, wa_id) in (${db
        .selectFrom('whatsapp_conversations')
        .select(['workspace_id', 'wa_id'])
        .where('workspace_id', '=', workspaceId)
        .where('last_message_at', '<', cutoff)
        .limit(limit)})`),
    // Webhook payloads (deliveries and attempts cascade), unless a delivery of the event is still pending.
    webhook_events: oldRows({
      table: 'webhook_events',
      olderBy: 'created_at',
      owner: 'workspace_id',
      also: ({ not, exists, selectFrom }) =>
        not(exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'webhook_events.id').where('d.status', '=', 'pending'))),
    }),
    notifications: oldRows({ table: 'notifications', olderBy: 'created_at', owner: 'workspace_id' }),
  };
}

export function createRetention(deps: RetentionDeps) {
  const { db, logger, audit } = deps;
  const batch = deps.batch ?? PURGE_BATCH;
  const intervalMs = deps.intervalMs ?? PURGE_INTERVAL_MS;
  const purgedRows = new Counter({
    name: 'botlink_retention_purged_rows_total',
    help: 'Rows the retention purge deleted, by kind of record (conversations, turns, messages, audit, …).',
    labelNames: ['kind'] as const,
    registers: deps.registry ? [deps.registry] : [],
  });
  const runs = new Counter({
    name: 'botlink_retention_purge_runs_total',
    help: 'Retention purges this engine ran, by outcome (done, failed); a purge another engine claimed is not counted.',
    labelNames: ['outcome'] as const,
    registers: deps.registry ? [deps.registry] : [],
  });

  /** Claims the purge for this engine until the next one is due; false when another engine holds it. */
  async function claim(now: Date): Promise<boolean> {
    await db.insertInto('job_claims').values({ name: JOB }).onConflict((oc) => oc.column('name').doNothing()).execute();
    const claimed = await db
      .updateTable('job_claims')
      .set({ lease_owner: deps.engine, lease_until: new Date(now.getTime() + intervalMs), last_run_at: now })
      .where('name', '=', JOB)
      .where('lease_until', '<=', now)
      .returning('name')
      .execute();
    return claimed.length === 1;
  }

  async function drain(run: (limit: number) => { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }): Promise<number> {
    let total = 0;
    for (;;) {
      const n = Number((await run(batch).executeTakeFirst()).numDeletedRows);
      total += n;
      if (n < batch) return total;
    }
  }

  /** Deletes what every workspace with a period keeps past it, and old audit entries. */
  async function purgeAll(now: Date): Promise<Purged> {
    const purged: Purged = {};
    const add = (kind: string, n: number) => {
      purged[kind] = (purged[kind] ?? 0) + n;
      if (n > 0) purgedRows.inc({ kind }, n);
    };
    const workspaces = await db.selectFrom('workspaces').select(['id', 'retention_days']).where('retention_days', 'is not', null).execute();
    for (const w of workspaces) {
      const cutoff = new Date(now.getTime() - (w.retention_days as number) * 86_400_000);
      for (const [kind, run] of Object.entries(steps(db, w.id, cutoff))) add(kind, await drain(run));
    }
    let auditDeleted = 0;
    for (;;) {
      const n = await audit.purge(batch);
      auditDeleted += n;
      if (n < batch) break;
    }
    add('audit', auditDeleted);
    return purged;
  }

  return {
    async days(workspaceId: string): Promise<number | null> {
      const row = await db.selectFrom('workspaces').select('retention_days').where('id', '=', workspaceId).executeTakeFirst();
      return row?.retention_days ?? null;
    },

    async setDays(workspaceId: string, days: number | null): Promise<void> {
      await db.updateTable('workspaces').set({ retention_days: days }).where('id', '=', workspaceId).execute();
    },

    /**
     * One purge if it is due and no other engine runs it: `{ran: false}` otherwise. `force` skips the claim (tests of
     * two purges at once, and the operator's command).
     */
    async purge(options: { now?: Date; force?: boolean } = {}): Promise<{ ran: boolean; purged: Purged }> {
      const now = options.now ?? new Date();
      if (!options.force && !(await claim(now))) return { ran: false, purged: {} };
      const started = Date.now();
      try {
        const purged = await purgeAll(now);
        runs.inc({ outcome: 'done' });
        logger.info({ ...purged, ms: Date.now() - started }, 'retention purge done');
        return { ran: true, purged };
      } catch (err) {
        runs.inc({ outcome: 'failed' });
        throw err;
      }
    },

    /** Tries the purge every interval (claimed by one engine at a time); the returned function stops it. */
    start(): () => void {
      const timer = setInterval(() => {
        this.purge().catch((err: unknown) => logger.error({ err }, 'the retention purge failed; the next run tries again'));
      }, intervalMs);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}
