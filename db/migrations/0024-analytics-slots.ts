import { sql, type Kysely } from 'kysely';
import { foldSlotsSql, messagesSql, sessionsSql, turnsSql } from '../analytics-rollup.ts';

// The Overview's roll-ups without a queue (docs/analytics.md, "How the figures are kept"): one row per workspace, hour
// and channel made every message of a workspace wait for the commit of the one before (an agent's reply waited up to
// 400 ms for others' at 50 replies a second). Each connection now adds to a slot of its own; the readers sum the slots
// and the compaction folds past hours' slots into slot 0.

const FUNCTIONS = {
  analytics_sessions_added: (slotted: boolean) => [sessionsSql('added', slotted)],
  analytics_turns_added: (slotted: boolean) => turnsSql('added', slotted),
  analytics_messages_added: (slotted: boolean) => messagesSql('added', slotted),
};

async function replaceFunctions(db: Kysely<unknown>, slotted: boolean): Promise<void> {
  for (const [name, statements] of Object.entries(FUNCTIONS)) {
    await sql.raw(`create or replace function ${name}() returns trigger language plpgsql as $body$
    begin
      ${statements(slotted).map((s) => `${s};`).join('\n')}
      return null;
    end $body$`).execute(db);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table analytics_hours add column slot smallint not null default 0`.execute(db);
  await sql`alter table analytics_hours drop constraint analytics_hours_pkey, add primary key (workspace_id, hour, channel, slot)`.execute(db);
  await sql`alter table analytics_latency add column slot smallint not null default 0`.execute(db);
  await sql`alter table analytics_latency drop constraint analytics_latency_pkey, add primary key (workspace_id, kind, hour, channel, bucket, slot)`.execute(db);
  await replaceFunctions(db, true);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function down(db: Kysely<any>): Promise<void> {
  await replaceFunctions(db, false);
  // Every slot folded into slot 0, then one row per key again.
  for (const statement of foldSlotsSql()) await sql.raw(statement).execute(db);
  await sql`alter table analytics_hours drop constraint analytics_hours_pkey, drop column slot, add primary key (workspace_id, hour, channel)`.execute(db);
  await sql`alter table analytics_latency drop constraint analytics_latency_pkey, drop column slot, add primary key (workspace_id, kind, hour, channel, bucket)`.execute(db);
}
