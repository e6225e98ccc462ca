/** Reading Meta's payloads and the two webhook checks, without a server. */
import { describe, expect, it } from 'vitest';
import { e164, parseWebhook, WebhookPayloadError } from '../../../src/channels/whatsapp/payload.ts';
import { signWebhookBody, verifyHandshake, verifyWebhookSignature } from '../../../src/channels/whatsapp/signature.ts';
import { phrase } from '../../../src/ai/phrases.ts';
import { fixture } from './fixtures/meta.ts';

const values = { PHONE_NUMBER_ID: '106540352242922', WA_ID: '31612345678', MESSAGE_ID: 'wamid.ABC', TIMESTAMP: '1750857384', STATUS: 'delivered', BODY: 'hi' };

describe('parseWebhook', () => {
  it('reads a text message with its sender, time, text and profile name', () => {
    const parsed = parseWebhook(fixture('text-message-non-ascii', values).toString('utf8'));
    expect(parsed.skipped).toBe(0);
    expect(parsed.changes).toEqual([
      {
        phoneNumberId: '106540352242922',
        statuses: [],
        messages: [
          {
            id: 'wamid.ABC',
            waId: '31612345678',
            sentAt: new Date(1750857384_000),
            type: 'text',
            text: 'Café open? ¿Dónde está mi pedido? 😊 https://shop.example/orders/1234',
            replyId: null,
            profileName: 'Zoë Østergaard-Muñoz 李雷 🌻',
          },
        ],
      },
    ]);
  });

  it('reads other types without text, and statuses with their errors', () => {
    expect(parseWebhook(fixture('image-message', values).toString()).changes[0]!.messages[0]).toMatchObject({ type: 'image', text: null });
    expect(parseWebhook(fixture('status', values).toString()).changes[0]!.statuses).toEqual([
      { messageId: 'wamid.ABC', status: 'delivered', at: new Date(1750857384_000), error: null },
    ]);
    expect(parseWebhook(fixture('status-failed', values).toString()).changes[0]!.statuses[0]!.error).toEqual({ code: 131047, title: 'Re-engagement message' });
  });

  it("reads a tap on a reply button: the button's id and its title", () => {
    const tap = fixture('button-reply-message', { ...values, CONTEXT_ID: 'wamid.OUT1', REPLY_ID: 'satisfaction:0b7f3c1e-8d2a-4a51-9c6e-2f4d8b1a7e90:5', TITLE: 'Good' });
    expect(parseWebhook(tap.toString()).changes[0]!.messages).toEqual([
      { id: 'wamid.ABC', waId: '31612345678', sentAt: new Date(1750857384_000), type: 'interactive', text: 'Good', replyId: 'satisfaction:0b7f3c1e-8d2a-4a51-9c6e-2f4d8b1a7e90:5', profileName: 'Sheena Nelson' },
    ]);
    // Another interactive answer (a list's row) is no button reply; an image has no button either.
    const list = tap.toString().replace('"type":"button_reply","button_reply"', '"type":"list_reply","list_reply"');
    expect(parseWebhook(list).changes[0]!.messages[0]).toMatchObject({ type: 'interactive', text: null, replyId: null });
    expect(parseWebhook(fixture('image-message', values).toString()).changes[0]!.messages[0]!.replyId).toBeNull();
  });

  it('skips the parts it cannot read and keeps the rest', () => {
    const body = JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: '1', changes: [{ field: 'account_update', value: {} }] },
        {
          id: '2',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: '42' },
                messages: [{ id: 'a', from: '1', type: 'text', text: { body: 'ok' } }, { from: '1', type: 'text' }],
                statuses: [{ id: 'b', status: 'deleted' }],
              },
            },
          ],
        },
      ],
    });
    const parsed = parseWebhook(body);
    expect(parsed.skipped).toBe(3);
    expect(parsed.changes[0]!.messages.map((m) => m.id)).toEqual(['a']);
  });

  it('refuses what is not a WhatsApp payload at all', () => {
    expect(() => parseWebhook('not json')).toThrow(WebhookPayloadError);
    expect(() => parseWebhook('{"object":"page"}')).toThrow(WebhookPayloadError);
  });
});

describe('the webhook checks', () => {
  it('verifies sha256= + hex HMAC over the raw bytes, in either hex case, and nothing else', () => {
    const body = fixture('text-message-non-ascii', values);
    const header = signWebhookBody('secret', body);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature('secret', body, header)).toBe(true);
    expect(verifyWebhookSignature('secret', body, header.toUpperCase().replace('SHA256=', 'sha256='))).toBe(true);
    expect(verifyWebhookSignature('other', body, header)).toBe(false);
    expect(verifyWebhookSignature('secret', Buffer.concat([body, Buffer.from(' ')]), header)).toBe(false);
    expect(verifyWebhookSignature('secret', body, header.slice(7))).toBe(false);
    expect(verifyWebhookSignature('secret', body, undefined)).toBe(false);
  });

  it('answers the handshake only for subscribe with our token', () => {
    expect(verifyHandshake('tok', { mode: 'subscribe', token: 'tok', challenge: '123' })).toBe('123');
    expect(verifyHandshake('tok', { mode: 'subscribe', token: 'tok2', challenge: '123' })).toBeNull();
    expect(verifyHandshake('tok', { mode: 'subscribe', token: 'tok', challenge: '<script>\n' })).toBeNull();
  });
});

describe('small rules', () => {
  it('customer.phone is + and the digits of wa_id', () => {
    expect(e164('31612345678')).toBe('+31612345678');
    expect(e164('')).toBeNull();
  });

  it('the text-only notice falls back to English', () => {
    expect(phrase('text_only', 'nl-NL')).toMatch(/^Ik kan alleen/);
    expect(phrase('text_only', 'xx')).toMatch(/^I can only read text/);
    expect(phrase('text_only', 'en')).toMatch(/^I can only read text/);
  });
});
