/** `npm run cli -- …` as an operator or a CI pipeline runs it: `node src/cli.ts` in a child process. */
import { spawn } from 'node:child_process';

const root = new URL('../../', import.meta.url).pathname;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with `args`; the environment is this process's (NODE_EXTRA_CA_CERTS with the test CA) plus `env`. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const child = spawn(process.execPath, ['src/cli.ts', ...args], { cwd: root, env: { ...process.env, LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
