/**
 * Standard Webhooks signing (docs/interfaces.md: integrators verify with the official `standardwebhooks` libraries).
 *
 * - A secret is `whsec_` and base64 of random bytes; the HMAC key is the base64-decoded part after the prefix.
 * - The signed content is `${webhook-id}.${webhook-timestamp}.${body}`; the signature is base64 HMAC-SHA256.
 * - `webhook-signature` is a space-separated list of `v1,<signature>`: one per secret that currently signs, so a
 *   rotated secret keeps verifying for the overlap (Standard Webhooks: zero-downtime rotation).
 */
import { createHmac, randomBytes, type KeyObject } from 'node:crypto';
import { SECRET_BYTES } from './limits.ts';

export const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` + base64 of {@link SECRET_BYTES} random bytes. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The HMAC key of a `whsec_` secret. Throws on anything else, so a broken stored value is never signed with. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('A webhook secret starts with whsec_.');
  const encoded = secret.slice(SECRET_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0 || key.toString('base64') !== encoded) throw new Error('A webhook secret is base64 after whsec_.');
  return key;
}

/** What the dashboard shows of a secret: its prefix and last four characters. */
export function secretHint(secret: string): string {
  return `${SECRET_PREFIX}…${secret.slice(-4)}`;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function sign(key: Buffer | KeyObject, id: string, timestampSeconds: number, body: string | Buffer): string {
  const hmac = createHmac('sha256', key);
  hmac.update(`${id}.${timestampSeconds}.`);
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/** The three Standard Webhooks headers of one attempt; every key in `keys` adds a signature. */
export function webhookHeaders(keys: readonly (Buffer | KeyObject)[], id: string, timestampSeconds: number, body: string | Buffer): {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
} {
  if (keys.length === 0) throw new Error('At least one secret signs a webhook.');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': keys.map((key) => sign(key, id, timestampSeconds, body)).join(' '),
  };
}
