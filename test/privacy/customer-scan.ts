/**
 * Where a value is stored: every text, varchar, json and jsonb column of every table of the database's schema, read
 * from information_schema, so a table added later is scanned without editing the tests that use this.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export interface Hit {
  table: string;
  column: string;
  rows: number;
}

export async function textColumns(db: Db): Promise<{ table: string; column: string }[]> {
  const { rows } = await sql<{ table_name: string; column_name: string }>`
    select c.table_name, c.column_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = current_schema() and c.data_type in ('text', 'character varying', 'json', 'jsonb', 'ARRAY')
    order by c.table_name, c.column_name`.execute(db);
  return rows.map((r) => ({ table: r.table_name, column: r.column_name }));
}

/**
 * The columns holding `needle` (case-insensitive), and how many rows each; with `digits`, also where the column's
 * digits alone contain it (a phone number written with spaces or dashes).
 */
export async function scan(db: Db, needle: string, options: { digits?: boolean } = {}): Promise<Hit[]> {
  const hits: Hit[] = [];
  for (const { table, column } of await textColumns(db)) {
    const value = sql`${sql.ref(`${table}.${column}`)}::text`;
    const match = options.digits
      ? sql`position(${needle} in regexp_replace(${value}, '[^0-9]', '', 'g')) > 0`
      : sql`position(lower(${needle}) in lower(${value})) > 0`;
    const { rows } = await sql<{ n: string }>`select count(*) as n from ${sql.table(table)} where ${match}`.execute(db);
    const n = Number(rows[0]!.n);
    if (n > 0) hits.push({ table, column, rows: n });
  }
  return hits;
}

/** Every base table of the database's schema, from information_schema. */
export async function tableNames(db: Db): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db);
  return rows.map((r) => r.table_name);
}
