import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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
