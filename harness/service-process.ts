/**
 * The real service as an operator runs it: `node src/main.ts` in a child process, configured by its environment, on
 * a port chosen beforehand so that a restart after a crash listens where the callers, Meta and the widget already
 * point. Ready when `GET /readyz` answers 200. Used by the crash suite (test/process/crash.test.ts) and the soak
 * (bench/soak/), and the dead-endpoint benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

const root = new URL('../', import.meta.url).pathname;

/** A free TCP port on 127.0.0.1 (listened on and released; nothing else on this machine is expected to take it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface LogLine {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  pid: number;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Log lines at `warn` (40) or above, parsed; and the last lines of stderr. */
  warnings: LogLine[];
  /** Every log line, parsed, at whatever level LOG_LEVEL lets through (the customer-data log test reads them all). */
  lines: LogLine[];
  stderr(): string;
  /** SIGKILL: the process dies at once, whatever it was doing. */
  kill(): Promise<void>;
  /** SIGTERM: drain and stop; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export interface ServiceProcessOptions {
  port: number;
  /** The service's settings (DATABASE_URL or DATA_DIR, MASTER_KEY, …); PORT and HOST are set here. */
  env: Record<string, string>;
  /** Node flags before the script (`--import` of a probe, `--expose-gc`). */
  execArgv?: string[];
  /** Open an IPC channel (a probe in the child reports over it). */
  ipc?: boolean;
  /** How long the start may take; default 30 s. */
  readyTimeoutMs?: number;
}

export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...(options.execArgv ?? []), 'src/main.ts'], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env, PORT: String(options.port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc ? (['ipc'] as const) : [])],
  });
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const warnings: LogLine[] = [];
  const logLines: LogLine[] = [];
  let stderr = '';
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      try {
        const parsed = JSON.parse(line) as LogLine;
        logLines.push(parsed);
        if (parsed.level >= 40) warnings.push(parsed);
      } catch {
        // a line that is not pino's JSON (the first start's banner) is not a log line
      }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });

  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    if (gone) throw new Error(`the service exited during its start: ${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not ready within ${options.readyTimeoutMs ?? 30_000} ms: ${stderr}`);
    }
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    child,
    url,
    pid: child.pid!,
    exited,
    warnings,
    lines: logLines,
    stderr: () => stderr,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return (await exited).code;
    },
  };
}

/** One JSON call to a running service with a bearer token; throws with the answer when it is not 2xx. */
export async function api(base: string, method: string, path: string, token: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}
