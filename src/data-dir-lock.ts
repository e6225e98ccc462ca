/**
 * The embedded database belongs to one process at a time: two PGlite instances on one directory would corrupt it.
 * A lock file with the owner's pid guards DATA_DIR; a lock left by a dead process is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './errors.ts';

export function acquireDataDirLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'botlink.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(path, 'utf8').trim());
      if (pid && pid !== process.pid && isAlive(pid)) {
        throw new ConfigError(
          `DATA_DIR ${dataDir} is in use by another Botlink process (pid ${pid}); stop it first, or use its HTTP API (POST /v1/admin/workspaces).`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new ConfigError(`DATA_DIR ${dataDir}: could not take the lock file ${path}.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
