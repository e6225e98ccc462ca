/**
 * `npm test` changes no tracked file (docs/testing.md): the state of the checkout's tracked files is taken before the
 * run and compared after it, and the run fails naming what changed. Screenshots for the docs are written only by
 * `npm run screenshots` (SCREENSHOTS=1), which this check leaves alone. Outside a git checkout there is nothing to
 * compare.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));

/** The tracked files that differ from HEAD, each with a hash of its content now. */
function trackedState(): Map<string, string> | null {
  try {
    const names = execFileSync('git', ['diff', '--name-only', '-z', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const state = new Map<string, string>();
    for (const name of names.split('\0').filter(Boolean)) {
      let hash = 'deleted';
      try {
        hash = execFileSync('git', ['hash-object', '--', name], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      } catch {
        // Gone from the work tree: "deleted" says so.
      }
      state.set(name, hash);
    }
    return state;
  } catch {
    return null;
  }
}

interface Shared {
  before: Map<string, string> | null;
  users: number;
}

// Every tier's project lists this setup (vitest.config.ts): the first takes the state, the last compares it.
const KEY = Symbol.for('botlink.test.trackedFiles');
const shared = globalThis as { [KEY]?: Shared };

export default function setup(): () => void {
  if (process.env.SCREENSHOTS === '1') return () => {};
  const state = (shared[KEY] ??= { before: trackedState(), users: 0 });
  state.users += 1;
  return () => {
    state.users -= 1;
    if (state.users > 0) return;
    delete shared[KEY];
    const { before } = state;
    const after = trackedState();
    if (!before || !after) return;
    const changed = [...new Set([...before.keys(), ...after.keys()])].filter((name) => before.get(name) !== after.get(name)).sort();
    if (changed.length > 0) {
      throw new Error(`The test run changed ${changed.length} tracked file(s): ${changed.join(', ')}. A test writes to the repository; write to a temporary folder instead (screenshots: npm run screenshots).`);
    }
  };
}
