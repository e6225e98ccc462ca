/**
 * The audit log out of the engine's reach (docs/privacy.md, "Audit log"; docs/operations.md, "The audit log's owner"):
 * the table belongs to a role nobody logs in as, and a role granted what the docs tell an operator to grant may add
 * entries, read them and purge the old ones through the owner's function, but not empty, change, delete or unguard
 * them. On PostgreSQL the engine's role logs in as itself; on PGlite (one connection, as its superuser) it is taken
 * with SET LOCAL ROLE inside a transaction. The engine warns at start when its role can change the log.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type Db, type OpenedDatabase } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import { createLogger } from '../../src/log.ts';
import { createAudit } from '../../src/privacy/audit.ts';
import { auditLogHold } from '../../src/privacy/audit-owner.ts';
import { AUDIT_RETENTION_DAYS } from '../../src/privacy/limits.ts';
import { createOwnDatabase, describeEachDatabase, type OwnDatabase, type TestDatabase } from '../helpers/db.ts';
import { runCli } from '../helpers/cli.ts';
import { seedWorkspace, startTestService, startTestServiceOn } from '../helpers/service.ts';

const OWNER = 'botlink_audit_owner';
const WARNING = 'the audit log can be changed by the engine';
const DAY_MS = 86_400_000;
const url = process.env.TEST_DATABASE_URL;

/**
 * A ```sql block of docs/operations.md's "The audit log's owner", found by its first line, with the docs' role and
 * schema names replaced by the test's. One statement a line, as the docs write them (PGlite takes one at a time).
 */
function docsStatements(firstLine: string, names: { botlink: string; botlink_engine?: string; schema: string }): string[] {
  const docs = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf("## The audit log's owner"));
  const block = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.startsWith(firstLine));
  if (!block) throw new Error(`no sql block starting with ${firstLine} in docs/operations.md`);
  return block
    .split('\n')
    .filter((line) => line.trim() && !line.startsWith('--'))
    .map((line) =>
      line
        .replace(/\bbotlink_engine\b/g, names.botlink_engine ?? 'botlink_engine')
        .replace(/\bbotlink\b/g, names.botlink)
        // The schema is lowercase `public`; the pseudo-role PUBLIC is written in capitals.
        .replace(/\bpublic\b/g, names.schema),
    );
}

async function run(db: Kysely<Database>, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** Warnings the service logged at start and stop, by message. */
async function startWarnings(database: Pick<TestDatabase, 'db' | 'kind'>): Promise<{ msg: string; hold?: string }[]> {
  const lines: { msg: string; hold?: string }[] = [];
  const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string; hold?: string }) });
  const service = await startTestService({ ...database, close: async () => {} }, {}, { logger, retention: { intervalMs: 0 } });
  await service.stop();
  return lines.filter((l) => l.msg.startsWith(WARNING));
}

/** As a role: over its own login on PostgreSQL, or SET LOCAL ROLE in a transaction on PGlite. */
type AsRole = <T>(fn: (db: Db) => Promise<T>) => Promise<T>;

function countOf(db: Db, workspaceId: string): Promise<number> {
  return db
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow()
    .then((r) => Number(r.n));
}

/**
 * Everything a role that may only add and read is refused: each attempt fails, and the entries stay as they were.
 * `loggedIn`: the role is the session's own (PostgreSQL), so SET ROLE is checked against it, not against PGlite's superuser.
 */
async function expectOnlyAddAndRead(as: AsRole, superuser: Db, workspaceId: string, loggedIn: boolean): Promise<void> {
  await as((db) => createAudit({ db, logger: createLogger('silent') }).record({ workspaceId, action: 'sign_in', target: 'kept' }));
  const before = await superuser.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
  expect(before.length).toBeGreaterThan(0);
  await expect(as((db) => sql`truncate audit_log`.execute(db))).rejects.toThrow(/permission denied/);
  await expect(as((db) => db.updateTable('audit_log').set({ target: 'changed' }).execute())).rejects.toThrow(/permission denied/);
  await expect(as((db) => db.deleteFrom('audit_log').execute())).rejects.toThrow(/permission denied/);
  await expect(as((db) => sql`alter table audit_log disable trigger audit_log_append_only`.execute(db))).rejects.toThrow(/must be owner/);
  await expect(as((db) => sql`alter table audit_log owner to current_user`.execute(db))).rejects.toThrow(/must be owner/);
  if (loggedIn) await expect(as((db) => sql`set role ${sql.id(OWNER)}`.execute(db))).rejects.toThrow(/permission denied/);
  // The purge's old permission, a transaction-local setting, opens nothing any more.
  await expect(
    as(async (db) => {
      await sql`select set_config('botlink.audit_purge', 'on', true)`.execute(db);
      return db.deleteFrom('audit_log').execute();
    }),
  ).rejects.toThrow(/permission denied/);
  // The database numbers and dates an entry: the role cannot write an earlier time.
  await expect(as((db) => db.insertInto('audit_log').values({ workspace_id: workspaceId, action: 'sign_in', at: new Date(Date.now() - 800 * DAY_MS) }).execute())).rejects.toThrow(
    /permission denied/,
  );
  const after = await superuser.selectFrom('audit_log').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
  expect(after).toEqual(before);
}

/** The purge through the owner's function: entries past the retention go, the others stay. */
async function expectPurgeOfOldOnly(as: AsRole, superuser: Db, workspaceId: string): Promise<void> {
  // Old entries cannot be written by the role; the superuser writes them as they would have been written then.
  const old = new Date(Date.now() - (AUDIT_RETENTION_DAYS + 1) * DAY_MS);
  const young = new Date(Date.now() - (AUDIT_RETENTION_DAYS - 1) * DAY_MS);
  await superuser
    .insertInto('audit_log')
    .values([old, old, young].map((at) => ({ workspace_id: workspaceId, action: 'sign_in' as const, at })))
    .execute();
  const before = await countOf(superuser, workspaceId);
  const purge = (limit: number) => as((db) => createAudit({ db, logger: createLogger('silent') }).purge(limit));
  expect(await purge(1)).toBe(1);
  expect(await purge(100)).toBe(1);
  expect(await purge(100)).toBe(0);
  expect(await countOf(superuser, workspaceId)).toBe(before - 2);
  const left = await superuser.selectFrom('audit_log').select('at').where('workspace_id', '=', workspaceId).execute();
  expect(left.some((e) => new Date(e.at).getTime() === young.getTime())).toBe(true);
}

describeEachDatabase('the audit log out of the engine role’s reach', (get) => {
  const role = `botlink_engine_${randomBytes(5).toString('hex')}`;
  const workspaceId = crypto.randomUUID();
  let engine: OpenedDatabase | undefined;
  let asEngine: AsRole;

  beforeAll(async () => {
    const { db, kind, url: ownUrl } = get();
    const schema = 'public';
    const { rows } = await sql<{ me: string }>`select current_user as me`.execute(db);
    // The test's own login role; trust authentication on 127.0.0.1 lets it in without a password.
    await sql`create role ${sql.id(role)} ${sql.raw(kind === 'postgres' ? 'login' : 'nologin')}`.execute(db);
    // The role is made after migration 0027 ran, so both of the docs' blocks apply.
    const names = { botlink: rows[0]!.me, botlink_engine: role, schema };
    await run(db, [...docsStatements("-- The engine's role", names), ...docsStatements('-- The audit log:', names)]);
    if (kind === 'postgres') {
      const engineUrl = new URL(ownUrl!);
      engineUrl.username = role;
      engine = await openDatabase({ url: engineUrl.toString(), poolSize: 2 });
      const opened = engine;
      asEngine = (fn) => fn(opened.db);
    } else {
      asEngine = (fn) =>
        db.transaction().execute(async (trx) => {
          await sql`set local role ${sql.id(role)}`.execute(trx);
          return fn(trx);
        });
    }
  });
  afterAll(async () => {
    await engine?.close();
    const { db } = get();
    await sql`drop owned by ${sql.id(role)}`.execute(db);
    await sql`drop role ${sql.id(role)}`.execute(db);
  });

  it('belongs, with its sequence and purge function, to a role nobody logs in as; the purge runs as it with a fixed search path', async () => {
    const { db } = get();
    const { rows } = await sql<{ table_owner: string; sequence_owner: string; function_owner: string; definer: boolean; config: string[]; can_login: boolean }>`
      select pg_get_userbyid(t.relowner) as table_owner,
        pg_get_userbyid(s.relowner) as sequence_owner,
        pg_get_userbyid(p.proowner) as function_owner, p.prosecdef as definer, p.proconfig as config,
        (select rolcanlogin from pg_roles where rolname = ${OWNER}) as can_login
      from pg_class t, pg_class s, pg_proc p
      where t.oid = 'audit_log'::regclass and s.oid = pg_get_serial_sequence('audit_log', 'id')::regclass
        and p.oid = 'audit_log_purge(integer)'::regprocedure`.execute(db);
    expect(rows[0]).toEqual({ table_owner: OWNER, sequence_owner: OWNER, function_owner: OWNER, definer: true, config: ['search_path=pg_catalog, pg_temp'], can_login: false });
  });

  it("refuses the engine's role TRUNCATE, UPDATE, DELETE and ALTER TABLE (no disabled trigger, no new owner), and an entry's time", async () => {
    await expectOnlyAddAndRead(asEngine, get().db, workspaceId, get().kind === 'postgres');
  });

  it("lets the engine's role add entries and read them, dated by the database", async () => {
    const written = crypto.randomUUID();
    const page = await asEngine(async (db) => {
      const audit = createAudit({ db, logger: createLogger('silent') });
      await audit.record({ workspaceId: written, action: 'retention_changed', target: '30 days', ip: '127.0.0.1' });
      return audit.list(written, { limit: 10 });
    });
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]).toMatchObject({ action: 'retention_changed', target: '30 days', ip: '127.0.0.1' });
    expect(Math.abs(new Date(page.entries[0]!.at).getTime() - Date.now())).toBeLessThan(60_000);
  });

  it(`purges through the owner's function: entries older than ${AUDIT_RETENTION_DAYS} days go, younger ones stay`, async () => {
    await expectPurgeOfOldOnly(asEngine, get().db, crypto.randomUUID());
  });

  it('refuses TRUNCATE, UPDATE and the DELETE of a young entry even to a role that may (triggers)', async () => {
    const { db } = get();
    const mine = crypto.randomUUID();
    await db.insertInto('audit_log').values({ workspace_id: mine, action: 'sign_in' }).execute();
    await expect(sql`truncate audit_log`.execute(db)).rejects.toThrow(/append-only/);
    await expect(db.updateTable('audit_log').set({ target: 'changed' }).where('workspace_id', '=', mine).execute()).rejects.toThrow(/append-only/);
    await expect(db.deleteFrom('audit_log').where('workspace_id', '=', mine).execute()).rejects.toThrow(/append-only/);
    expect(await countOf(db, mine)).toBe(1);
  });

  it("warns once at start when the engine's role can change the log (a superuser), and not when it cannot", async () => {
    const { db, kind } = get();
    expect((await auditLogHold({ db })).hold).toBe('superuser');
    const warned = await startWarnings({ db, kind });
    // The embedded database has no other role to run as: no warning an owner could act on.
    if (kind === 'pglite') {
      expect(warned).toEqual([]);
      return;
    }
    expect(warned).toHaveLength(1);
    expect(warned[0]!.hold).toBe('superuser');
    // The whole service on the engine's role, granted as the docs say: it starts without the warning, records, purges.
    const opened = engine!;
    expect(await auditLogHold(opened)).toEqual({ role, hold: null });
    expect(await startWarnings({ db: opened.db, kind })).toEqual([]);
    const service = await startTestService({ db: opened.db, kind, close: async () => {} }, {}, { retention: { intervalMs: 0 } });
    try {
      const ws = await seedWorkspace(service, `Engine${Date.now()}`);
      expect((await service.api('GET', '/v1/audit', { token: ws.owner })).body.entries.length).toBe(3);
      expect((await service.privacy.retention.purge({ force: true })).ran).toBe(true);
    } finally {
      await service.stop();
    }
  });
});

describe('one role that runs the migrations and the engine, and may not create roles', () => {
  const role = `botlink_single_${randomBytes(5).toString('hex')}`;
  const schema = `s_${randomBytes(5).toString('hex')}`;
  let admin: OpenedDatabase | undefined;
  let single: OpenedDatabase | undefined;
  let asSingle: AsRole;

  beforeAll(async () => {
    if (!url) return;
    admin = await openDatabase({ url, schema, poolSize: 2 });
    await sql`create role ${sql.id(role)} login`.execute(admin.db);
    await sql`create schema ${sql.id(schema)} authorization ${sql.id(role)}`.execute(admin.db);
    const singleUrl = new URL(url);
    singleUrl.username = role;
    single = await openDatabase({ url: singleUrl.toString(), schema, poolSize: 2 });
    await migrate(single.db, schema);
    const opened = single;
    asSingle = (fn) => fn(opened.db);
  });
  afterAll(async () => {
    await single?.close();
    if (!admin) return;
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await sql`drop owned by ${sql.id(role)}`.execute(admin.db);
    await sql`drop role ${sql.id(role)}`.execute(admin.db);
    await admin.close();
  });

  it('keeps the table with that role after migrating, and the engine warns at start that its role owns it', async () => {
    if (!url) return expect(url).toBeUndefined();
    const { rows } = await sql<{ owner: string }>`select pg_get_userbyid(relowner) as owner from pg_class where oid = 'audit_log'::regclass`.execute(single!.db);
    expect(rows[0]!.owner).toBe(role);
    const warned = await startWarnings({ db: single!.db, kind: 'postgres' });
    expect(warned.map((w) => w.hold)).toEqual(['owner']);
  });

  it("after the operator's grant of the docs: only adding and reading, the purge still works, and no warning", async () => {
    if (!url) return expect(url).toBeUndefined();
    await run(admin!.db, docsStatements('-- One role', { botlink: role, schema }));
    await expectOnlyAddAndRead(asSingle, admin!.db, crypto.randomUUID(), true);
    await expectPurgeOfOldOnly(asSingle, admin!.db, crypto.randomUUID());
    expect(await startWarnings({ db: single!.db, kind: 'postgres' })).toEqual([]);
  });
});

describe('two roles: the engine migrates over DATABASE_MIGRATION_URL and works over DATABASE_URL', () => {
  const role = `botlink_engine_${randomBytes(5).toString('hex')}`;
  /** A role that may read and change every table, but not add: of the audit log it keeps reading. */
  const reporter = `botlink_report_${randomBytes(5).toString('hex')}`;
  let own: OwnDatabase | undefined;
  let admin: OpenedDatabase | undefined;
  let engine: OpenedDatabase | undefined;

  beforeAll(async () => {
    if (!url) return;
    own = await createOwnDatabase(url, 'audit');
    admin = await openDatabase({ url: own.url, poolSize: 1 });
    await sql`create role ${sql.id(role)} login`.execute(admin.db);
    // Before the first start, as the docs say: what the migrations will make, the engine's role may use.
    await run(admin.db, docsStatements("-- The engine's role", { botlink: 'postgres', botlink_engine: role, schema: 'public' }));
    await sql`create role ${sql.id(reporter)} nologin`.execute(admin.db);
    await sql`alter default privileges in schema public grant select, update, delete on tables to ${sql.id(reporter)}`.execute(admin.db);
  });
  afterAll(async () => {
    await engine?.close();
    await admin?.close();
    await own?.drop();
    if (!url) return;
    const again = await openDatabase({ url, poolSize: 1 });
    await sql`drop role if exists ${sql.id(role)}`.execute(again.db);
    await sql`drop role if exists ${sql.id(reporter)}`.execute(again.db);
    await again.close();
  });

  it('the CLI too: the first to run, it migrates as the migrating role and works as the engine’s', { timeout: 30_000 }, async () => {
    if (!url) return expect(url).toBeUndefined();
    const engineUrl = new URL(own!.url);
    engineUrl.username = role;
    const env = { DATABASE_URL: engineUrl.toString(), DATABASE_MIGRATION_URL: own!.url, MASTER_KEY: randomBytes(32).toString('hex') };
    const created = await runCli(['workspace', 'create', '--name', 'Cli', '--owner', 'cli@two-roles.example', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { rows } = await sql<{ name: string; owner: string }>`
      select relname as name, pg_get_userbyid(relowner) as owner from pg_class where oid in ('users'::regclass, 'audit_log'::regclass) order by relname`.execute(admin!.db);
    expect(rows).toEqual([
      { name: 'audit_log', owner: OWNER },
      { name: 'users', owner: 'postgres' },
    ]);
    expect((await admin!.db.selectFrom('users').select('email').execute()).map((u) => u.email)).toEqual(['cli@two-roles.example']);
  });

  it("makes every table as the migrating role, and leaves the engine's role adding to the audit log and reading it", async () => {
    if (!url) return expect(url).toBeUndefined();
    const engineUrl = new URL(own!.url);
    engineUrl.username = role;
    const lines: { msg: string }[] = [];
    const logger = createLogger('warn', { write: (line: string) => void lines.push(JSON.parse(line) as { msg: string }) });
    const service = await startTestServiceOn({ DATABASE_URL: engineUrl.toString(), DATABASE_MIGRATION_URL: own!.url }, { logger, retention: { intervalMs: 0 } });
    try {
      const ws = await seedWorkspace(service, `TwoRoles${Date.now()}`);
      expect((await service.api('GET', '/v1/audit', { token: ws.owner })).body.entries.length).toBe(3);
      expect((await service.privacy.retention.purge({ force: true })).ran).toBe(true);
      const { rows } = await sql<{ owner: string }>`select pg_get_userbyid(relowner) as owner from pg_class where oid = 'users'::regclass`.execute(admin!.db);
      expect(rows[0]!.owner).toBe('postgres');
      engine = await openDatabase({ url: engineUrl.toString(), poolSize: 1 });
      const opened = engine;
      await expectOnlyAddAndRead((fn) => fn(opened.db), admin!.db, ws.workspaceId, true);
      const may = async (who: string, what: string) =>
        (await sql<{ yes: boolean }>`select has_any_column_privilege(${who}, 'audit_log', ${what}) as yes`.execute(admin!.db)).rows[0]!.yes;
      expect(await Promise.all(['SELECT', 'INSERT', 'UPDATE'].map((what) => may(role, what)))).toEqual([true, true, false]);
      expect(await Promise.all(['SELECT', 'INSERT', 'UPDATE'].map((what) => may(reporter, what)))).toEqual([true, false, false]);
      // Other tables keep what the default privileges gave.
      const users = (await sql<{ yes: boolean }>`select has_table_privilege(${reporter}, 'users', 'UPDATE') as yes`.execute(admin!.db)).rows[0]!.yes;
      expect(users).toBe(true);
    } finally {
      await service.stop();
    }
    expect(lines.filter((l) => l.msg.startsWith(WARNING))).toEqual([]);
  });
});
