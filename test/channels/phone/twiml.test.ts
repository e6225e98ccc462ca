import { describe, expect, it } from 'vitest';
import { connectTwiml, sayAndHangUpTwiml } from '../../../src/channels/phone/twiml.ts';

describe('TwiML', () => {
  it('escapes settings that end up in attributes and text', () => {
    const xml = connectTwiml({ websocketUrl: 'wss://x.example/v1/phone/ws?issued=1&a=2', actionUrl: 'https://x.example/a', language: 'nl-NL', welcomeGreeting: 'Hallo "daar" <test>' });
    expect(xml).toContain('url="wss://x.example/v1/phone/ws?issued=1&amp;a=2"');
    expect(xml).toContain('welcomeGreeting="Hallo &quot;daar&quot; &lt;test&gt;"');
    expect(sayAndHangUpTwiml('A & B', 'en-US')).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Say language="en-US">A &amp; B</Say><Hangup/></Response>');
  });
});
