/**
 * Kysely's PostgreSQL introspector, reading the catalogs by oid only, so that a schema or table dropped by another
 * session while it reads is simply not listed.
 *
 * Kysely's Migrator asks `getTables()` whether its own two tables exist, and Kysely's query lists every table of every
 * schema through two functions that look their argument up by name: `has_schema_privilege(nspname, …)` and
 * `pg_get_serial_sequence('schema.table', …)`. The catalog rows come from the query's snapshot, but a name lookup
 * sees the catalogs as they are now: a schema dropped in between fails the whole read with 3F000, a table with 42P01.
 * Another tenant's schema, another engine's test file: a migration run failed on someone else's drop. The oid forms
 * answer from the same snapshot as the rows (a `has_schema_privilege(oid, …)` of an object gone answers null), and
 * the serial sequence is read from `pg_depend` as `pg_get_serial_sequence` itself reads it.
 */
import { sql, type ColumnMetadata, type DatabaseIntrospector, type DatabaseMetadataOptions, type QueryExecutorProvider, type SchemaMetadata, type TableMetadata } from 'kysely';
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE } from 'kysely/migration';

/** The Migrator's own tables, listed only when asked for. */
const KYSELY_TABLES = [DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE];

interface ColumnRow {
  column: string;
  not_null: boolean;
  has_default: boolean;
  table: string;
  table_type: string;
  schema: string;
  type: string;
  type_schema: string;
  column_description: string | null;
  auto_incrementing: boolean;
}

export class SnapshotIntrospector implements DatabaseIntrospector {
  readonly #db: QueryExecutorProvider;

  /** `db`: any Kysely instance or transaction; only raw SQL is run through it. */
  constructor(db: QueryExecutorProvider) {
    this.#db = db;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.#db);
    return rows.map((row) => ({ name: row.name }));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select a.attname as column, a.attnotnull as not_null, a.atthasdef as has_default, c.relname as table,
             c.relkind as table_type, ns.nspname as schema, typ.typname as type, dtns.nspname as type_schema,
             col_description(a.attrelid, a.attnum) as column_description,
             serial.refobjid is not null as auto_incrementing
      from pg_catalog.pg_attribute a
      join pg_catalog.pg_class c on a.attrelid = c.oid
      join pg_catalog.pg_namespace ns on c.relnamespace = ns.oid
      join pg_catalog.pg_type typ on a.atttypid = typ.oid
      join pg_catalog.pg_namespace dtns on typ.typnamespace = dtns.oid
      left join (select distinct d.refobjid, d.refobjsubid
                 from pg_catalog.pg_depend d join pg_catalog.pg_class s on s.oid = d.objid and s.relkind = 'S'
                 where d.classid = 'pg_catalog.pg_class'::regclass and d.refclassid = 'pg_catalog.pg_class'::regclass
                   and d.deptype in ('a', 'i')) serial on serial.refobjid = c.oid and serial.refobjsubid = a.attnum
      where c.relkind in ('r', 'v', 'p', 'f')
        and ns.nspname !~ '^pg_' and ns.nspname <> 'information_schema'
        and coalesce(has_schema_privilege(ns.oid, 'USAGE'), false)
        and a.attnum >= 0 and not a.attisdropped
        ${options.withInternalKyselyTables ? sql`` : sql`and c.relname <> all(${KYSELY_TABLES})`}
      order by ns.nspname, c.relname, a.attnum`.execute(this.#db);
    const tables = new Map<string, TableMetadata & { columns: ColumnMetadata[] }>();
    for (const row of rows) {
      const key = `${row.schema}.${row.table}`;
      let table = tables.get(key);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.table_type === 'v', isForeign: row.table_type === 'f', columns: [] };
        tables.set(key, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.auto_incrementing,
        isNullable: !row.not_null,
        ...(row.column_description === null ? {} : { comment: row.column_description }),
      });
    }
    return [...tables.values()];
  }
}
