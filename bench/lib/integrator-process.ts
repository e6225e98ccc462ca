/** Starts bench/processes/integrator-server.ts in a child process on the same Node binary, and talks to it over IPC. */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export interface IntegratorProcess {
  /** `https://127.0.0.1:<port>` */
  origin: string;
  pid: number;
  /** The child's CPU time so far (process.cpuUsage, user + system, microseconds) and TLS handshakes accepted. */
  stats(): Promise<IntegratorStats>;
  stop(): Promise<void>;
}

export interface IntegratorStats {
  cpuMicros: number;
  tlsHandshakes: number;
}

type Message =
  | { type: 'listening'; port: number }
  | { type: 'cpu'; usage: NodeJS.CpuUsage; tlsHandshakes: number };

export async function startIntegratorProcess(options: { delayMs?: number; echoRef?: boolean } = {}): Promise<IntegratorProcess> {
  const child: ChildProcess = fork(new URL('../processes/integrator-server.ts', import.meta.url), [], {
    // The running Node (24, which strips types), not whatever `node` is first on PATH.
    execPath: process.execPath,
    // Not the parent's flags: a --cpu-prof on the benchmark should profile the client only.
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, INTEGRATOR_DELAY_MS: String(options.delayMs ?? 0), INTEGRATOR_ECHO_REF: options.echoRef ? '1' : '0' },
  });
  const exited = once(child, 'exit');
  const port = await new Promise<number>((resolve, reject) => {
    const onMessage = (message: Message) => {
      if (message.type === 'listening') {
        child.off('exit', onExit);
        resolve(message.port);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`the integrator server exited early (code ${code})`));
    child.once('exit', onExit);
    child.on('message', onMessage);
  });
  return {
    origin: `https://127.0.0.1:${port}`,
    pid: child.pid!,
    stats() {
      return new Promise<IntegratorStats>((resolve) => {
        const onMessage = (message: Message) => {
          if (message.type !== 'cpu') return;
          child.off('message', onMessage);
          resolve({ cpuMicros: message.usage.user + message.usage.system, tlsHandshakes: message.tlsHandshakes });
        };
        child.on('message', onMessage);
        child.send({ type: 'cpu' });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Closing the IPC channel makes the child exit by itself (see its 'disconnect' handler).
      child.disconnect();
      await exited;
    },
  };
}
