/** Starts a load generator (bench/processes/phone-callers.ts by default) in a process of its own and talks to it over IPC. */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import type { CallersConfig, CallersMessage } from '../processes/phone-callers.ts';
import { nextMessage } from './child-message.ts';

/** Which script to run and the variable its configuration travels in (JSON). */
export interface CallersScript {
  url: URL;
  configVariable: string;
}

export const PHONE_CALLERS: CallersScript = { url: new URL('../processes/phone-callers.ts', import.meta.url), configVariable: 'PHONE_CALLERS_CONFIG' };

/** `config` is the script's own configuration (CallersConfig for the phone callers); `Message` what it sends back. */
export function startCallersProcess<Message extends { type: string } = CallersMessage>(config: CallersConfig | object, script: CallersScript = PHONE_CALLERS) {
  const child = fork(script.url, [], {
    execPath: process.execPath,
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [script.configVariable]: JSON.stringify(config) },
  });
  const exited = once(child, 'exit');
  /** The next message of this type from the callers; rejects when their process exits first. */
  const next = <T extends Message['type']>(type: T) => nextMessage<Message, T>(child, type, "the callers' process");
  return {
    next,
    send: (type: 'start' | 'stop' | 'close') => child.send({ type }),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.disconnect();
      await exited;
    },
  };
}

/** A running load generator that sends `Message`s (the phone callers' by default). */
export type CallersProcess<Message extends { type: string } = CallersMessage> = ReturnType<typeof startCallersProcess<Message>>;
