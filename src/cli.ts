/**
 * The operator's and the integrator's command line: `npm run cli -- <noun> <verb> [options]`, one module per noun in
 * src/cli/. The database commands use the same configuration as the service (DATABASE_URL, or the embedded database
 * in DATA_DIR while the service is stopped) and the same services as the HTTP API, so the API's rules and messages
 * hold. Exit 0 on success, 1 when the operation is refused (the API's message), 2 on a usage error.
 */
import { parseArgs } from 'node:util';
import { CLI_OPTIONS, UsageError, type CliCommand } from './cli/context.ts';
import { integratorCommands } from './cli/integrator.ts';
import { keyCommands } from './cli/key.ts';
import { scenarioCommands } from './cli/scenarios.ts';
import { secretsCommands } from './cli/secrets.ts';
import { tokenCommands } from './cli/token.ts';
import { userCommands } from './cli/user.ts';
import { webhookCommands } from './cli/webhook.ts';
import { workspaceCommands } from './cli/workspace.ts';
import { AppError, errorText } from './errors.ts';

const commands: CliCommand[] = [
  ...workspaceCommands,
  ...userCommands,
  ...tokenCommands,
  ...keyCommands,
  ...webhookCommands,
  ...secretsCommands,
  ...integratorCommands,
  ...scenarioCommands,
];

const usage = `Usage (every command takes --json: the answer as JSON, for scripts):

${commands.map((c) => `  npm run cli -- ${c.usage}`).join('\n')}

Tokens, keys, secrets and invite links are printed once; invite links start with PUBLIC_URL. Commands that use the
database run against PostgreSQL (DATABASE_URL) at any time, and against the embedded database (DATA_DIR) only while
the service is stopped. Exit 0: done; 1: refused (the reason is printed); 2: a usage error.`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: CLI_OPTIONS });
  } catch (err) {
    return usageError(errorText(err));
  }
  const { values, positionals } = parsed;
  // `doctor <url>` is one word; every other command is a noun and a verb.
  const command = commands.find((c) => c.name === positionals.slice(0, c.name.split(' ').length).join(' '));
  if (values.help || !command) {
    if (values.help) {
      console.log(usage);
      return 0;
    }
    return usageError(positionals.length === 0 ? 'a command is required.' : `no command ${JSON.stringify(positionals.slice(0, 2).join(' '))}.`);
  }
  try {
    return await command.run(values, positionals.slice(command.name.split(' ').length));
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message);
    if (err instanceof AppError) {
      console.error(`botlink cli: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

function usageError(message: string): number {
  console.error(`botlink cli: ${message}\n\n${usage}`);
  return 2;
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  console.error(`botlink cli: ${errorText(err)}`);
  process.exitCode = 1;
}
