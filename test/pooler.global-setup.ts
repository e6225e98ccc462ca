/**
 * The `pooler` project's setup (vitest.config.ts): Debian's pgbouncer in transaction mode in front of
 * TEST_DATABASE_URL's server for the whole run; its base URL is provided to the suites (test/helpers/db.ts).
 */
import type { TestProject } from 'vitest/node';
import { startPgbouncer } from '../harness/pgbouncer.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const upstream = new URL(process.env.TEST_DATABASE_URL as string);
  const user = decodeURIComponent(upstream.username || 'postgres');
  const bouncer = await startPgbouncer({ host: upstream.hostname, port: Number(upstream.port || 5432), user });
  project.provide('poolerUrl', `postgres://${user}@127.0.0.1:${bouncer.port}`);
  return () => bouncer.stop();
}
