/**
 * One migrated embedded database, dumped to a file for the whole run. Every PGlite test database starts from it
 * (test/helpers/db.ts) instead of creating an empty cluster and migrating it, which took about 1.5 s of CPU per block.
 *
 * Every tier's project (vitest.config.ts) lists this setup; the first one makes the dump and the others share it (the
 * setups run in one main process), so the run migrates once however many projects it has.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect } from 'kysely';
import type { TestProject } from 'vitest/node';
import { migrate } from '../db/database.ts';
import type { Database } from '../db/schema.ts';

interface Shared {
  file: Promise<{ dir: string; file: string }>;
  users: number;
}

const KEY = Symbol.for('botlink.test.pgliteTemplate');
const shared = globalThis as { [KEY]?: Shared };

async function dumpMigrated(): Promise<{ dir: string; file: string }> {
  const pglite = await PGlite.create();
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  await migrate(db);
  const dump = await pglite.dumpDataDir('none');
  await db.destroy();
  const dir = mkdtempSync(join(tmpdir(), 'botlink-pglite-template-'));
  const file = join(dir, 'migrated.tar');
  writeFileSync(file, new Uint8Array(await dump.arrayBuffer()));
  return { dir, file };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const state = (shared[KEY] ??= { file: dumpMigrated(), users: 0 });
  state.users += 1;
  const { dir, file } = await state.file;
  project.provide('pgliteTemplate', file);
  return async () => {
    state.users -= 1;
    if (state.users > 0) return;
    delete shared[KEY];
    rmSync(dir, { recursive: true, force: true });
  };
}
