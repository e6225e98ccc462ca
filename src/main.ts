/** Starts Botlink: configuration, database, HTTP; SIGTERM and SIGINT drain and stop. */
import { createFirstWorkspace, firstStartMessage } from './bootstrap.ts';
import { loadConfig, type Config } from './config.ts';
import { ConfigError } from './errors.ts';
import { createLogger } from './log.ts';
import { startService } from './service.ts';

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`botlink: ${err.message}`);
  process.exit(1);
}

const logger = createLogger(config.logLevel);
try {
  const service = await startService({ config, logger });
  // The embedded database is the out-of-the-box setup; with DATABASE_URL the operator uses the CLI or admin API.
  if (!config.databaseUrl) {
    const created = await createFirstWorkspace(service.accounts, config.firstOwner);
    if (created) console.log(firstStartMessage(created, service.url, config.publicUrl));
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service.stop().then(
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
