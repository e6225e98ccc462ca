/**
 * The master key: MASTER_KEY when set; in embedded mode without it, a key generated once into DATA_DIR/master.key
 * (mode 0600) and read back on later starts.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.ts';

export const MASTER_KEY_FILE = 'master.key';

export function loadOrCreateMasterKey(configured: Buffer | null, dataDir: string): { key: Buffer; created: boolean } {
  if (configured) return { key: configured, created: false };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, MASTER_KEY_FILE);
  try {
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077) {
      throw new ConfigError(`${path} must be readable by its owner only (chmod 600 ${path}); it holds the master key.`);
    }
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new ConfigError(`${path} does not hold a 32-byte base64 master key.`);
    return { key, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  // 'wx': never overwrite a key another process wrote a moment ago; losing it would lose every stored secret.
  writeFileSync(path, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  return { key, created: true };
}
