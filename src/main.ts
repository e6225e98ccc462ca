/** Starts Botlink: configuration, database, HTTP; SIGTERM and SIGINT drain and stop. */
import { createFirstWorkspace, signInLine, startMessage } from './bootstrap.ts';
import { loadConfig, type Config } from './config.ts';
import { ConfigError } from './errors.ts';
import { createLogger, terminalDestination } from './log.ts';
import { startService } from './app/service.ts';
import { startTracing } from './app/tracing.ts';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`botlink: ${err.message}`);
  process.exit(1);
}

// In a terminal the logs are lines a person reads; piped (a container, a collector) they stay pino's JSON.
const logger = createLogger(config.logLevel, process.stdout.isTTY ? terminalDestination() : undefined, { customerData: config.logCustomerData });
try {
  // Before the service, so every span of every turn goes to the collector (docs/operations.md, "Tracing").
  const tracing = await startTracing(config.otlpEndpoint ?? undefined);
  const service = await startService({ config, logger });
  // The embedded database is the out-of-the-box setup; with DATABASE_URL the operator uses the CLI or admin API.
  const created = config.databaseUrl ? null : await createFirstWorkspace(service.accounts, config.firstOwner);
  console.log(startMessage({ created, publicUrl: config.publicUrl, local: service.url, database: config.databaseUrl ? 'PostgreSQL' : `embedded database in ${config.dataDir}` }));
  // The sign-in link again at the end of the first minute, in case log lines pushed it out of sight.
  const inviteUrl = created?.owner.invite_url;
  if (inviteUrl) setTimeout(() => console.log(`\nIf you have not signed in yet:\n${signInLine(inviteUrl)}\n`), 60_000).unref();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service
        .stop()
        .then(() => tracing?.shutdown())
        .then(
        () => process.exit(0),
        (err: unknown) => {
          logger.error({ err }, 'stop failed');
          process.exit(1);
        },
      );
    });
  }
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`botlink: ${err.message}`);
    process.exit(1);
  }
  logger.fatal({ err }, 'start failed');
  process.exit(1);
}
