/**
 * Every migration, in order. A static list (rather than reading the folder) so the same set runs under Node, vitest
 * and a bundled image, and a missing file is a type error instead of a silently skipped migration.
 */
import type { Migration } from 'kysely/migration';
import * as m0001 from './0001-foundation.ts';

export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
};
