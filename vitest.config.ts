import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configDefaults, defineConfig } from 'vitest/config';
import { filesByTier, type Tier } from './test/tiers.ts';

// The test CA that signs the loopback HTTPS servers (integrator, LLM, Meta) is trusted the way production trusts a
// custom CA: through Node's own NODE_EXTRA_CA_CERTS, which a process reads when it starts. So it is set here, in the
// main process, before the test workers are forked. The variable names one file and may already be set on the
// machine, so the test CA is appended to whatever bundle it names.
const testCa = readFileSync(new URL('./test/fixtures/tls/ca.pem', import.meta.url), 'utf8');
const existing = process.env.NODE_EXTRA_CA_CERTS;
if (!existing?.includes('botlink-test-ca')) {
  const bundle = join(mkdtempSync(join(tmpdir(), 'botlink-test-ca-')), 'ca-bundle.pem');
  const previous = existing && existsSync(existing) ? readFileSync(existing, 'utf8') : '';
  writeFileSync(bundle, `${previous}\n${testCa}`);
  process.env.NODE_EXTRA_CA_CERTS = bundle;
}

/**
 * With TEST_DATABASE_URL, a representative set of the database suites (channels, webhooks, sessions, sync) runs a
 * second time through pgbouncer in transaction mode (docs/operations.md, "Several processes on one PostgreSQL"),
 * on PostgreSQL only (test/helpers/db.ts).
 */
const POOLER_SUITES = [
  'test/channels/whatsapp/worker.conversation.test.ts',
  'test/channels/webchat/webchat-service.transactions.test.ts',
  'test/webhooks/delivery-worker.schedule.test.ts',
  'test/sessions/session-runtime.test.ts',
  'test/http/sync.test.ts',
  'test/leases/lease-keeper.test.ts',
  'test/knowledge/sources/website-sync.test.ts',
];

/**
 * Suites that need the real PostgreSQL (two engines on one database, pgbouncer, statement counts): without
 * TEST_DATABASE_URL they have nothing to run, so they are left out instead of failing as empty files; CI sets it.
 */
const POSTGRES_ONLY = [
  'test/process/takeover.test.ts',
  'test/db/pool-size.test.ts',
  'test/db/statements-per-turn.test.ts',
  'test/db/pooler.test.ts',
  'test/db/pooler-sign.test.ts',
  'test/e2e/inbox-two-engines.test.ts',
];

/**
 * The tiers (test/tiers.ts decides a file's tier from what it imports, so a new file needs no edit here), each a
 * project: `npx vitest run --project unit --project db` is the inner loop (`npm run test:quick`, on PGlite), and
 * `npm test` runs them all. Every project shares one migrated PGlite dump and, with TEST_DATABASE_URL, one migrated
 * PostgreSQL template database for the run (the setups make them once).
 */
const byTier = filesByTier();
const databases = ['test/pglite-template.global-setup.ts', 'test/postgres-template.global-setup.ts'];
const leftOut = [...configDefaults.exclude, ...(process.env.TEST_DATABASE_URL ? [] : POSTGRES_ONLY)];
const tier = (name: Tier, globalSetup: string[]) => ({
  extends: true as const,
  test: { name, include: byTier[name], exclude: leftOut, globalSetup: [...globalSetup, 'test/tracked-files.global-setup.ts'] },
});

export default defineConfig({
  test: {
    projects: [
      tier('unit', []),
      tier('db', databases),
      tier('service', databases),
      tier('process', databases),
      // One Chromium for the run, which every page suite connects to (test/helpers/browser.ts).
      tier('browser', [...databases, 'test/browser.global-setup.ts']),
      // The pooler's suites run on PostgreSQL, but a block may still open an embedded database (session-runtime's stop
      // test does): it loads the run's dump too, instead of migrating from nothing (27 s on a loaded machine).
      ...(process.env.TEST_DATABASE_URL ? [{ extends: true as const, test: { name: 'pooler', include: POOLER_SUITES, globalSetup: [...databases, 'test/pooler.global-setup.ts'] } }] : []),
    ],
    pool: 'forks',
    // Most suites wait on sockets, timers and child processes rather than the CPU: two files at a time on the 2-core CI
    // machine (vitest's default there is one). The whole run's wall time is recorded in docs/operations.md ("Tests").
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    restoreMocks: true,
  },
});
