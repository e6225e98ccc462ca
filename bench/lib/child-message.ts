/** One IPC helper for the benchmarks' child processes (callers, engines): wait for a message of one type. */
import type { ChildProcess } from 'node:child_process';

/** The next message of `type` from `child`; rejects when the process exits first (`who` names it in the error). */
export function nextMessage<Message extends { type: string }, T extends Message['type']>(child: ChildProcess, type: T, who: string): Promise<Extract<Message, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: Message) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as Extract<Message, { type: T }>);
    };
    const onExit = (code: number | null) => reject(new Error(`${who} exited early (code ${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
