import { describe, expect, it } from 'vitest';
import { AiError } from '../src/ai/ai-error.ts';
import { WebhookPayloadError } from '../src/channels/whatsapp/payload.ts';
import { AppError, BotlinkError, ConfigError, FAILURE_REASONS } from '../src/errors.ts';
import { BodyTooLargeError } from '../src/net/bounded-read.ts';
import { OutboundError, RefusedAddressError } from '../src/net/guarded-client.ts';

describe('one error vocabulary', () => {
  it('every error the service raises on purpose is a BotlinkError with a stable code and its class name', () => {
    const errors: [BotlinkError, string, string][] = [
      [new AppError('not_found', 'x'), 'not_found', 'AppError'],
      [new ConfigError('x'), 'config', 'ConfigError'],
      [new OutboundError('timeout', 'x'), 'outbound', 'OutboundError'],
      [new RefusedAddressError('h', '10.0.0.1', 'private'), 'refused_address', 'RefusedAddressError'],
      [new BodyTooLargeError(10), 'body_too_large', 'BodyTooLargeError'],
      [new AiError('empty', 'x'), 'ai', 'AiError'],
      [new WebhookPayloadError('x'), 'webhook_payload', 'WebhookPayloadError'],
    ];
    for (const [err, code, name] of errors) {
      expect(err).toBeInstanceOf(BotlinkError);
      expect(err).toBeInstanceOf(Error);
      expect([err.code, err.name]).toEqual([code, name]);
    }
  });

  it('the failure reasons are one set without repeats', () => {
    expect(new Set(FAILURE_REASONS).size).toBe(FAILURE_REASONS.length);
  });
});
