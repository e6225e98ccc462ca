/**
 * The session runtime as the channels see it, with each turn counted in flight for admission control. The runtime's
 * own `handleMessage` is looked up at each call, so whoever wraps the runtime object itself (the phone bench times it)
 * still sees every turn.
 */
import type { SessionRuntime } from '../sessions/session-runtime.ts';
import type { Admission } from './admission.ts';

export function countTurns(runtime: SessionRuntime, admission: Pick<Admission, 'turnStarted' | 'turnEnded'>): SessionRuntime {
  return {
    ...runtime,
    async handleMessage(message) {
      admission.turnStarted();
      try {
        return await runtime.handleMessage(message);
      } finally {
        admission.turnEnded();
      }
    },
  };
}
