/**
 * Secrets at rest (integration keys, webhook secrets, WhatsApp tokens): AES-256-GCM under the master key. Each
 * sealed value is bound to what it belongs to (the additional authenticated data, e.g. `integration:<workspace>`),
 * so a ciphertext copied onto another row does not open.
 *
 * Format: `v1.<iv base64url>.<ciphertext+tag base64url>`; the version leaves room for key rotation.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** Throws when the value was tampered with, sealed under another key, or for another context. */
  open(sealed: string, context: string): string;
  /** Whether the value opens with the current master key (false: sealed under a previous one, or unreadable). */
  isCurrent(sealed: string, context: string): boolean;
}

/**
 * `previousKeys`: during a rotation (MASTER_KEY_PREVIOUS), values sealed under the old key still open; everything is
 * sealed under the new one, and `npm run cli -- secrets reseal` rewrites what is stored (src/secrets/reseal.ts).
 */
export function createSecretBox(masterKey: Buffer, previousKeys: readonly Buffer[] = []): SecretBox {
  if (masterKey.length !== 32 || previousKeys.some((k) => k.length !== 32)) throw new Error('The master key must be 32 bytes.');
  const key = Buffer.from(masterKey);
  const current = openWith(key);
  const openers = [current, ...previousKeys.map((k) => openWith(Buffer.from(k)))];
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString('base64url')}.${data.toString('base64url')}`;
    },
    open(sealed, context) {
      let first: unknown;
      for (const open of openers) {
        try {
          return open(sealed, context);
        } catch (err) {
          first ??= err;
        }
      }
      throw first;
    },
    isCurrent(sealed, context) {
      try {
        current(sealed, context);
        return true;
      } catch {
        return false;
      }
    },
  };
}

function openWith(key: Buffer): (sealed: string, context: string) => string {
  return (sealed, context) => {
    const [version, ivText, dataText] = sealed.split('.');
    if (version !== VERSION || !ivText || !dataText) throw new Error('Unknown sealed-secret format.');
    const iv = Buffer.from(ivText, 'base64url');
    const data = Buffer.from(dataText, 'base64url');
    if (iv.length !== IV_BYTES || data.length < TAG_BYTES) throw new Error('Truncated sealed secret.');
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    return Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  };
}
