/** The IPC helpers of the benchmarks' child processes (callers, engines): wait for a message of one type, on either side. */
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

/** In a child process: resolves at the parent's next message of `type`. */
export function parentMessage(type: string): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== type) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}
