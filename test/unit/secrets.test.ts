import { mkdtempSync, readFileSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { loadOrCreateMasterKey } from '../../src/secrets/master-key.ts';
import { createSecretBox } from '../../src/secrets/secret-box.ts';

describe('secrets at rest (AES-256-GCM)', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed, and never stores the plain text', () => {
    const sealed = box.seal('the-integration-key', 'integration-key:w1');
    expect(sealed).not.toContain('the-integration-key');
    expect(box.open(sealed, 'integration-key:w1')).toBe('the-integration-key');
  });

  it('seals the same value differently each time (random IV)', () => {
    expect(box.seal('x', 'c')).not.toBe(box.seal('x', 'c'));
  });

  it('refuses a value moved to another row (other context)', () => {
    const sealed = box.seal('k', 'integration-key:w1');
    expect(() => box.open(sealed, 'integration-key:w2')).toThrow();
  });

  it('refuses a tampered value and one sealed under another master key', () => {
    const sealed = box.seal('k'.repeat(64), 'c');
    const parts = sealed.split('.');
    const data = Buffer.from(parts[2]!, 'base64url');
    data[0]! ^= 1;
    expect(() => box.open(`${parts[0]}.${parts[1]}.${data.toString('base64url')}`, 'c')).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(sealed, 'c')).toThrow();
  });
});

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
