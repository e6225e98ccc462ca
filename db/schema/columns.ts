/** The column types the tables share (db/schema.ts re-exports `Json`). */
import type { ColumnType } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export type Json = ColumnType<unknown, string, string>;
