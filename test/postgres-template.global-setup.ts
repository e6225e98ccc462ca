/**
 * With TEST_DATABASE_URL: one database on that server migrated once for the whole run, as graphile-worker's own suite
 * does it. Every PostgreSQL test database is a `CREATE DATABASE … TEMPLATE` copy of it (test/helpers/db.ts), about
 * 0.1 s, where a fresh schema and 39 migrations took about 3 s per block. Nobody connects to the template after the
 * setup (PostgreSQL refuses to copy a database someone is connected to).
 *
 * Every tier's project lists this setup; the first one makes the template and the others share it (one main process).
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../db/database.ts';

interface Shared {
  name: Promise<string>;
  users: number;
}

const KEY = Symbol.for('botlink.test.postgresTemplate');
const shared = globalThis as { [KEY]?: Shared };

const PREFIX = 'botlink_template_';

/** Whether a process of this machine is still running. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function createTemplate(serverUrl: string): Promise<string> {
  // The run's own name, with its process id: several runs (and other checkouts) may share one server.
  const name = `${PREFIX}${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await openDatabase({ url: serverUrl, poolSize: 1 });
  try {
    // A run that was killed never dropped its template: gone when its process is.
    const { rows } = await sql<{ datname: string }>`select datname from pg_database where starts_with(datname, ${PREFIX})`.execute(admin.db);
    for (const { datname } of rows) {
      const pid = Number(datname.slice(PREFIX.length).split('_')[0]);
      if (Number.isInteger(pid) && pid > 0 && !running(pid)) await sql`drop database if exists ${sql.id(datname)} with (force)`.execute(admin.db);
    }
    await sql`create database ${sql.id(name)}`.execute(admin.db);
  } finally {
    await admin.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const template = await openDatabase({ url: url.href, poolSize: 1 });
  try {
    await migrate(template.db);
  } finally {
    await template.close();
  }
  return name;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return async () => {};
  const state = (shared[KEY] ??= { name: createTemplate(serverUrl), users: 0 });
  state.users += 1;
  project.provide('postgresTemplate', await state.name);
  return async () => {
    state.users -= 1;
    if (state.users > 0) return;
    delete shared[KEY];
    const admin = await openDatabase({ url: serverUrl, poolSize: 1 });
    try {
      await sql`drop database if exists ${sql.id(await state.name)} with (force)`.execute(admin.db);
    } finally {
      await admin.close();
    }
  };
}
