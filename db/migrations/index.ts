/**
 * Every migration, in order. A static list (rather than reading the folder) so the same set runs under Node, vitest
 * and a bundled image, and a missing file is a type error instead of a silently skipped migration.
 */
import type { Migration } from 'kysely/migration';
import * as m0001 from './0001-foundation.ts';
import * as m0002 from './0002-knowledge.ts';
import * as m0003 from './0003-sessions.ts';
import * as m0004 from './0004-outbox.ts';

export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-knowledge': m0002,
  '0003-sessions': m0003,
  '0004-outbox': m0004,
};
