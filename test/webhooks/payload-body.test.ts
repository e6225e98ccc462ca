/**
 * Our Standard Webhooks signer against the specification's published test vector and the official library, and the
 * retry policy (Svix's schedule, jitter, Retry-After, status handling) as pure functions.
 */
import { describe, expect, it } from 'vitest';
import { encodePayload } from '../../src/webhooks/payload-body.ts';

describe('payload bytes (protocol §6)', () => {
  it('puts the keys in the order of the spec table, whatever order jsonb returned them in', () => {
    const stored = { timestamp: '2026-01-01T00:00:00.000Z', phone: '', email: 'jan@example.com', name: 'Jan', conversation_id: 'c1', event: 'new_lead' };
    expect(encodePayload(stored)).toBe('{"event":"new_lead","conversation_id":"c1","name":"Jan","email":"jan@example.com","phone":"","timestamp":"2026-01-01T00:00:00.000Z"}');
    expect(encodePayload({ type: 'requested', event: 'escalation', conversation_id: 'c', visitor_message: 'm', timestamp: 't' })).toBe(
      '{"event":"escalation","conversation_id":"c","type":"requested","visitor_message":"m","timestamp":"t"}',
    );
  });
});
