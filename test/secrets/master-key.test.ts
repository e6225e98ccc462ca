import { mkdtempSync, readFileSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { loadOrCreateMasterKey } from '../../src/secrets/master-key.ts';

describe('the master key file (embedded mode)', () => {
  it('is generated once with mode 0600 and read back later', () => {
    const dir = mkdtempSync(join(tmpdir(), 'botlink-key-'));
    const first = loadOrCreateMasterKey(null, dir);
    expect(first.created).toBe(true);
    expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600);
    const again = loadOrCreateMasterKey(null, dir);
    expect(again).toEqual({ key: first.key, created: false });
    expect(readFileSync(join(dir, 'master.key'), 'utf8').trim()).toBe(first.key.toString('base64'));
  });

  it('refuses a key file others can read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'botlink-key-'));
    loadOrCreateMasterKey(null, dir);
    chmodSync(join(dir, 'master.key'), 0o644);
    expect(() => loadOrCreateMasterKey(null, dir)).toThrow(ConfigError);
  });

  it('uses MASTER_KEY when given and writes nothing', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'botlink-key-')), 'sub');
    const key = randomBytes(32);
    expect(loadOrCreateMasterKey(key, dir)).toEqual({ key, created: false });
  });
});
