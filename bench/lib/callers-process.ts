/** Starts bench/phone-callers.ts (the phone load generator) in a process of its own and talks to it over IPC. */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import type { CallersConfig, CallersMessage } from '../phone-callers.ts';

export function startCallersProcess(config: CallersConfig) {
  const child = fork(new URL('../phone-callers.ts', import.meta.url), [], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, PHONE_CALLERS_CONFIG: JSON.stringify(config) },
  });
  const exited = once(child, 'exit');
  /** The next message of this type from the callers; rejects when their process exits first. */
  const next = <T extends CallersMessage['type']>(type: T) =>
    new Promise<Extract<CallersMessage, { type: T }>>((resolve, reject) => {
      const onMessage = (message: CallersMessage) => {
        if (message.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message as Extract<CallersMessage, { type: T }>);
      };
      const onExit = (code: number | null) => reject(new Error(`the callers' process exited early (code ${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  return {
    next,
    send: (type: 'start' | 'close') => child.send({ type }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.disconnect();
      await exited;
    },
  };
}
