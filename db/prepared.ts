/**
 * Prepared statements for the hot queries on real PostgreSQL. pg sends every query as an unnamed statement, which
 * the server parses and plans each time. A query marked with `prepared('name')` anywhere in its text is sent as a
 * named statement instead: parsed once per connection, then only bound and executed.
 *
 * Mark only queries whose text has one fixed shape (no lists of varying length spliced in): each distinct text marked
 * becomes one statement on every connection. MAX_PREPARED_TEXTS bounds them anyway; beyond it, marked queries go
 * unnamed as before. PGlite ignores the mark (it is an SQL comment).
 *
 * Mark only queries whose plan does not depend on their parameters or on the table's size. After five executions
 * PostgreSQL may switch a prepared statement to a generic plan, made without the values and kept until the table's
 * next ANALYZE: for primary-key writes and lookups that is the same plan. A lookup that several indexes could serve
 * is not marked: made on a new, small table, its generic plan may take the wrong one and keep it while the table
 * grows (the sessions' find by external id read a whole workspace's sessions). Neither is the knowledge search (its
 * plan depends on the query's terms and limits).
 */
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';

const MARK = /\/\* prepare:([a-z0-9_]+) \*\//;
/** Distinct marked texts that get a name; a safety net against a marked query whose text varies. */
export const MAX_PREPARED_TEXTS = 256;

/** The mark: `sql\`${prepared('knowledge_search')} select …\`` or `.modifyEnd(prepared('lease'))` on a builder. */
export function prepared(name: string): RawBuilder<unknown> {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`Invalid prepared statement name ${name}`);
  return sql.raw(`/* prepare:${name} */`);
}

/** One name per distinct marked text, for the whole process (pg remembers per connection which it has parsed). */
const names = new Map<string, string>();

function nameFor(text: string): string | undefined {
  const known = names.get(text);
  if (known !== undefined) return known;
  const mark = MARK.exec(text);
  if (!mark || names.size >= MAX_PREPARED_TEXTS) return undefined;
  const name = `${mark[1]}_${names.size}`;
  names.set(text, name);
  return name;
}

/**
 * PostgreSQL's answers to a named statement that only a transaction pooler in front explains: the name exists already
 * on a server connection this client never prepared it on (42P05 duplicate_prepared_statement), or is missing from the
 * one this client prepared it on (26000 invalid_sql_statement_name).
 */
const POOLER_SIGNS = new Set(['42P05', '26000']);

/** The pool's client class: Kysely calls `query(text, values)`; a marked text goes out as a named statement. */
export class PreparingClient extends pg.Client {
  /** Told when the server answers a named statement as it does only behind a transaction pooler. */
  protected onPoolerSign(_code: string): void {}

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && callback === undefined && config.includes('/* prepare:')) {
      const name = nameFor(config);
      if (name !== undefined) {
        return (super.query({ name, text: config, values: values ?? [] }) as Promise<unknown>).catch((err: unknown) => {
          const code = (err as { code?: unknown }).code;
          if (typeof code === 'string' && POOLER_SIGNS.has(code)) this.onPoolerSign(code);
          throw err;
        });
      }
    }
    return super.query(config, values, callback);
  }
}

/** A PreparingClient class whose pooler signs reach `onPoolerSign` (one class per database opened). */
export function preparingClient(onPoolerSign: ((code: string) => void) | undefined): typeof PreparingClient {
  if (!onPoolerSign) return PreparingClient;
  return class extends PreparingClient {
    protected override onPoolerSign(code: string): void {
      onPoolerSign(code);
    }
  };
}
