import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { publicRequestUrl, twilioSignature, verifyTwilioSignature } from '../../../src/channels/phone/twilio-signature.ts';

describe("Twilio's request signature", () => {
  const token = '12345';
  // The example of Twilio's documentation: the URL, then the POST parameters sorted by name, name then value.
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  const params = { CallSid: 'CA1234567890ABCDE', Caller: '+12349013030', Digits: '1234', From: '+12349013030', To: '+18005551212' };

  it('is base64 HMAC-SHA1 over the URL and the sorted parameters', () => {
    const data = url + 'CallSidCA1234567890ABCDE' + 'Caller+12349013030' + 'Digits1234' + 'From+12349013030' + 'To+18005551212';
    expect(twilioSignature(token, url, params)).toBe(createHmac('sha1', token).update(data).digest('base64'));
    expect(twilioSignature(token, url, params)).toBe('0/KCTR6DLpKmkAf8muzZqo1nDgQ=');
  });

  it('verifies a right signature and refuses a changed parameter, URL or missing header', () => {
    const signature = twilioSignature(token, url, params);
    expect(verifyTwilioSignature(token, signature, url, params)).toBe(true);
    expect(verifyTwilioSignature(token, signature, url, { ...params, To: '+18005551213' })).toBe(false);
    expect(verifyTwilioSignature(token, signature, url.replace('foo=1', 'foo=2'), params)).toBe(false);
    expect(verifyTwilioSignature(token, undefined, url, params)).toBe(false);
    expect(verifyTwilioSignature('other', signature, url, params)).toBe(false);
  });

  it('signs the WebSocket upgrade over the wss:// URL built from PUBLIC_URL', () => {
    expect(publicRequestUrl('https://botlink.example.com/', '/v1/phone/ws?issued=1', 'ws')).toBe('wss://botlink.example.com/v1/phone/ws?issued=1');
    expect(publicRequestUrl('http://localhost:8080', '/v1/phone/ws', 'ws')).toBe('ws://localhost:8080/v1/phone/ws');
    expect(publicRequestUrl('https://x.example/base', '/v1/phone/twilio/voice', 'http')).toBe('https://x.example/base/v1/phone/twilio/voice');
  });
});
