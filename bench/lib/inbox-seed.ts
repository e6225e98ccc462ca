/**
 * Seeding the inbox benchmarks at size (bench/inbox.bench.ts, bench/inbox-assignment.bench.ts): conversations made
 * through the real pipeline are copied in SQL, session, turns and messages, until the workspace holds as many as wanted.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

async function columns(db: Db, table: string): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`
    select column_name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db);
  return rows.map((r) => r.column_name);
}

/** `select` expressions copying `table`'s row `alias`, with some columns replaced (or left out: null). */
function copyList(all: string[], alias: string, replace: Record<string, string | null>): { names: string; values: string } {
  const kept = all.filter((c) => replace[c] !== null);
  return { names: kept.map((c) => `"${c}"`).join(', '), values: kept.map((c) => replace[c] ?? `${alias}."${c}"`).join(', ') };
}

/**
 * Copies of the workspace's conversations (session, turns, messages) until it holds `total`: each copy has its own
 * ids, and its updated_at spread over the `spreadMinutes` before (default 60), so the views' orders interleave them.
 * (A web chat with no message for webchat_idle_minutes, 30 by default, ends: spread web chats less than that.)
 */
export async function copyConversations(db: Db, workspaceId: string, total: number, spreadMinutes = 60): Promise<number> {
  const [sessions, turns, messages] = await Promise.all([columns(db, 'sessions'), columns(db, 'session_turns'), columns(db, 'session_messages')]);
  return db.transaction().execute(async (trx) => {
    const existing = Number((await sql<{ n: string }>`select count(*) as n from sessions where workspace_id = ${workspaceId}`.execute(trx)).rows[0]!.n);
    const wanted = Math.max(0, total - existing);
    const copies = Math.ceil(wanted / Math.max(1, existing));
    await sql`create temp table bench_copy on commit drop as
      select s.id as old_id, gen_random_uuid() as new_id, g from sessions s cross join generate_series(1, ${copies}::int) g
      where s.workspace_id = ${workspaceId} order by g, s.id limit ${wanted}`.execute(trx);
    const s = copyList(sessions, 's', {
      id: 'm.new_id',
      external_id: `s.external_id || ':copy' || m.g`,
      updated_at: `s.updated_at - random() * interval '${Math.round(spreadMinutes)} minutes'`,
      lease_owner: null,
      lease_until: null,
    });
    await sql.raw(`insert into sessions (${s.names}) select ${s.values} from sessions s join bench_copy m on m.old_id = s.id`).execute(trx);
    const t = copyList(turns, 't', { id: `t.id || ':copy' || m.g`, session_id: 'm.new_id' });
    await sql.raw(`insert into session_turns (${t.names}) select ${t.values} from session_turns t join bench_copy m on m.old_id = t.session_id`).execute(trx);
    const msg = copyList(messages, 'x', {
      id: 'gen_random_uuid()',
      seq: null,
      session_id: 'm.new_id',
      turn_id: `x.turn_id || ':copy' || m.g`,
      outbound_id: null,
    });
    await sql.raw(`insert into session_messages (${msg.names}) select ${msg.values} from session_messages x join bench_copy m on m.old_id = x.session_id order by x.seq`).execute(trx);
    return existing + wanted;
  });
}
