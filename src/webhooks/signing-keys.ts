/**
 * The HMAC keys a delivery is signed with: opened from their sealed form once and cached (a sealed value never
 * changes meaning, so there is nothing to invalidate).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { ClaimedDelivery } from '../../machines/webhook-delivery-types.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { secretKey } from './signing.ts';
import { webhookSecretContext } from '../secrets/contexts.ts';

/** Opened secrets kept (sealed value → HMAC key). */
const KEY_CACHE_SIZE = 1_000;

export type SigningKeys = (delivery: ClaimedDelivery, at: number) => KeyObject[];

/** The current secret signs; the previous one as well until its overlap ends (rotation). */
export function createSigningKeys(secrets: SecretBox): SigningKeys {
  const cache = new Map<string, KeyObject>();

  function keyOf(sealed: string, endpointId: string): KeyObject {
    let key = cache.get(sealed);
    if (!key) {
      key = createSecretKey(secretKey(secrets.open(sealed, webhookSecretContext(endpointId))));
      if (cache.size >= KEY_CACHE_SIZE) cache.clear();
      cache.set(sealed, key);
    }
    return key;
  }

  return (d, at) => {
    const keys = [keyOf(d.secretSealed, d.endpointId)];
    if (d.previousSecretSealed && d.previousSecretExpiresAt !== null && d.previousSecretExpiresAt > at) {
      keys.push(keyOf(d.previousSecretSealed, d.endpointId));
    }
    return keys;
  };
}
