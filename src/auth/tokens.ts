/** Bearer tokens: random, shown once, stored only as a SHA-256 hash (they carry 256 bits, so a fast hash is enough). */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

const PREFIX = 'blt_';

export function newToken(): { id: string; token: string; hash: string } {
  const token = PREFIX + randomBytes(32).toString('base64url');
  return { id: randomUUID(), token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Constant-time comparison of two secrets of any length (both hashed first, so lengths leak nothing). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** The token of `Authorization: Bearer <token>`, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+([\x21-\x7e]+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}
