/**
 * The `botlink` project's setup (vitest.config.ts): one migrated embedded database, dumped to a file for the whole
 * run. Every PGlite test database starts from it (test/helpers/db.ts) instead of creating an empty cluster and
 * migrating it, which took about 1.5 s of CPU per block.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect } from 'kysely';
import type { TestProject } from 'vitest/node';
import { migrate } from '../db/database.ts';
import type { Database } from '../db/schema.ts';

export default async function setup(project: TestProject): Promise<() => void> {
  const pglite = await PGlite.create();
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  await migrate(db);
  const dump = await pglite.dumpDataDir('none');
  await db.destroy();
  const dir = mkdtempSync(join(tmpdir(), 'botlink-pglite-template-'));
  const file = join(dir, 'migrated.tar');
  writeFileSync(file, new Uint8Array(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  return () => rmSync(dir, { recursive: true, force: true });
}
