import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

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

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'botlink', include: ['test/**/*.test.ts'], globalSetup: ['test/pglite-template.global-setup.ts'] } },
      ...(process.env.TEST_DATABASE_URL ? [{ extends: true, test: { name: 'pooler', include: POOLER_SUITES, globalSetup: ['test/pooler.global-setup.ts'] } }] : []),
    ],
    pool: 'forks',
    // Most suites wait on sockets, timers and child processes rather than the CPU: two files at a time on the 2-core CI
    // machine (vitest's default there is one) keeps the suite near 10 minutes instead of 20.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    restoreMocks: true,
  },
});
