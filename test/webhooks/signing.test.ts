/**
 * Our Standard Webhooks signer against the specification's published test vector and the official library, and the
 * retry policy (Svix's schedule, jitter, Retry-After, status handling) as pure functions.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { encodePayload } from '../../src/webhooks/payload-body.ts';
import { generateSecret, secretHint, secretKey, sign, webhookHeaders } from '../../src/webhooks/signing.ts';

describe('signing (Standard Webhooks)', () => {
  // The test vector published with the Standard Webhooks reference libraries.
  const vector = {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    timestamp: 1614265330,
    payload: '{"test": 2432232314}',
    signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  };

  it('produces the published test vector', () => {
    expect(sign(secretKey(vector.secret), vector.id, vector.timestamp, vector.payload)).toBe(vector.signature);
    expect(sign(secretKey(vector.secret), vector.id, vector.timestamp, Buffer.from(vector.payload))).toBe(vector.signature);
  });

  it('agrees with the official library on the test vector', () => {
    expect(new Webhook(vector.secret).sign(vector.id, new Date(vector.timestamp * 1000), vector.payload)).toBe(vector.signature);
  });

  it('signs headers the official library verifies, with a freshly generated secret', () => {
    const secret = generateSecret();
    const body = encodePayload({ event: 'test' });
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([secretKey(secret)], 'msg_abc', now, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ event: 'test' });
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body.replace('test', 'tesT'), headers)).toThrow();
  });

  it('sends one space-separated signature per signing secret (rotation)', () => {
    const [current, previous] = [generateSecret(), generateSecret()];
    const body = '{"event":"test"}';
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([secretKey(current), secretKey(previous)], 'msg_rot', now, body);
    const [first, second] = headers['webhook-signature'].split(' ');
    expect(new Webhook(current).verify(body, { ...headers, 'webhook-signature': first! })).toEqual({ event: 'test' });
    expect(new Webhook(previous).verify(body, { ...headers, 'webhook-signature': second! })).toEqual({ event: 'test' });
  });

  it('makes whsec_ secrets of 32 random bytes and hints at their last four characters', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secretKey(secret)).toHaveLength(32);
    expect(generateSecret()).not.toBe(secret);
    expect(secretHint(secret)).toBe(`whsec_…${secret.slice(-4)}`);
    expect(() => secretKey('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toThrow();
    expect(() => secretKey('whsec_not base64!')).toThrow();
  });
});
