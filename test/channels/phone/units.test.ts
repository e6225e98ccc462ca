import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseFrame, parseHandoffData } from '../../../src/channels/phone/frames.ts';
import { normaliseE164 } from '../../../src/channels/phone/phone-number.ts';
import { createTeamAvailability } from '../../../src/channels/phone/team-availability.ts';
import { teamHoursProblems, wallClock, withinTeamHours, type TeamHours } from '../../../src/channels/phone/team-hours.ts';
import { connectTwiml, sayAndHangUpTwiml } from '../../../src/channels/phone/twiml.ts';
import { publicRequestUrl, twilioSignature, verifyTwilioSignature } from '../../../src/channels/phone/twilio-signature.ts';

describe('E.164 numbers', () => {
  it('keeps E.164 and removes the separators people write', () => {
    expect(normaliseE164('+31201234567')).toBe('+31201234567');
    expect(normaliseE164(' +31 (0)20 123 4567')).toBe('+31201234567'); // "(0)": only dialled inside the country
    expect(normaliseE164('+31 20-123.4567')).toBe('+31201234567');
    expect(normaliseE164('tel:+1-800-555-0100')).toBe('+18005550100');
  });

  it('refuses national numbers, letters, too long numbers and non-strings', () => {
    for (const bad of ['0201234567', '+0201234567', '+3120abc', '+1234567890123456', '', 'anonymous', 'client:alice', 42, null]) {
      expect(normaliseE164(bad)).toBeNull();
    }
  });
});

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

describe('ConversationRelay frames', () => {
  it('reads setup, prompt, interrupt, dtmf and error frames', () => {
    expect(parseFrame(JSON.stringify({ type: 'setup', sessionId: 'VX1', callSid: 'CA1', from: '+31612345678', to: '+31201234567', customParameters: { a: 'b' }, accountSid: 'AC1' }))).toEqual({
      ok: true,
      frame: { type: 'setup', sessionId: 'VX1', callSid: 'CA1', from: '+31612345678', to: '+31201234567', customParameters: { a: 'b' } },
    });
    expect(parseFrame('{"type":"prompt","voicePrompt":"hoi","lang":"nl-NL","last":false}')).toEqual({ ok: true, frame: { type: 'prompt', voicePrompt: 'hoi', lang: 'nl-NL', last: false } });
    expect(parseFrame('{"type":"prompt","voicePrompt":"hi"}')).toMatchObject({ ok: true, frame: { last: true, lang: null } });
    expect(parseFrame('{"type":"interrupt","utteranceUntilInterrupt":"Your order","durationUntilInterruptMs":820}')).toMatchObject({ ok: true, frame: { utteranceUntilInterrupt: 'Your order' } });
    expect(parseFrame('{"type":"dtmf","digit":"0"}')).toEqual({ ok: true, frame: { type: 'dtmf', digit: '0' } });
    expect(parseFrame('{"type":"error","description":"Invalid message"}')).toMatchObject({ ok: true, frame: { type: 'error' } });
  });

  it('drops what does not fit, naming why', () => {
    expect(parseFrame('{nope')).toMatchObject({ ok: false, reason: 'invalid_json' });
    expect(parseFrame('[1]')).toMatchObject({ ok: false, reason: 'not_an_object' });
    expect(parseFrame('{"type":"teleport"}')).toMatchObject({ ok: false, reason: 'unknown_type' });
    expect(parseFrame('{"type":"setup","to":"+1"}')).toMatchObject({ ok: false, reason: 'invalid_fields' });
    expect(parseFrame('{"type":"prompt","voicePrompt":5}')).toMatchObject({ ok: false, reason: 'invalid_fields' });
    expect(parseFrame('{"type":"dtmf","digit":"12"}')).toMatchObject({ ok: false, reason: 'invalid_fields' });
  });

  it('reads only our own handoffData', () => {
    expect(parseHandoffData('{"reason":"human","session_id":"s1"}')).toEqual({ reason: 'human', session_id: 's1' });
    expect(parseHandoffData('{"reason":"mystery"}')).toBeNull();
    expect(parseHandoffData('not json')).toBeNull();
    expect(parseHandoffData(undefined)).toBeNull();
  });
});

describe('TwiML', () => {
  it('escapes settings that end up in attributes and text', () => {
    const xml = connectTwiml({ websocketUrl: 'wss://x.example/v1/phone/ws?issued=1&a=2', actionUrl: 'https://x.example/a', language: 'nl-NL', welcomeGreeting: 'Hallo "daar" <test>' });
    expect(xml).toContain('url="wss://x.example/v1/phone/ws?issued=1&amp;a=2"');
    expect(xml).toContain('welcomeGreeting="Hallo &quot;daar&quot; &lt;test&gt;"');
    expect(sayAndHangUpTwiml('A & B', 'en-US')).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Say language="en-US">A &amp; B</Say><Hangup/></Response>');
  });
});

describe('team hours', () => {
  const hours: TeamHours = { time_zone: 'Europe/Amsterdam', week: { mon: [['09:00', '17:30']], sat: [['10:00', '14:00']], sun: [['22:00', '24:00']] } };

  it('are read on the wall clock of their time zone, daylight saving time included', () => {
    // Winter (CET, UTC+1): 08:30 UTC is 09:30 in Amsterdam.
    expect(wallClock(new Date('2026-03-02T08:30:00Z'), 'Europe/Amsterdam')).toEqual({ day: 'mon', minute: 9 * 60 + 30 });
    expect(withinTeamHours(hours, new Date('2026-03-02T07:59:00Z'))).toBe(false); // 08:59
    expect(withinTeamHours(hours, new Date('2026-03-02T08:00:00Z'))).toBe(true); // 09:00
    expect(withinTeamHours(hours, new Date('2026-03-02T16:29:00Z'))).toBe(true); // 17:29
    expect(withinTeamHours(hours, new Date('2026-03-02T16:30:00Z'))).toBe(false); // 17:30: the end is not included
    // Summer (CEST, UTC+2): 15:15 UTC is 17:15, 15:45 UTC is 17:45.
    expect(withinTeamHours(hours, new Date('2026-06-01T15:15:00Z'))).toBe(true);
    expect(withinTeamHours(hours, new Date('2026-06-01T15:45:00Z'))).toBe(false);
    // A closed day, and a range up to midnight.
    expect(withinTeamHours(hours, new Date('2026-03-03T10:00:00Z'))).toBe(false); // Tuesday
    expect(withinTeamHours(hours, new Date('2026-03-01T22:59:00Z'))).toBe(true); // Sunday 23:59
    expect(withinTeamHours(hours, new Date('2026-03-01T23:00:00Z'))).toBe(false); // Monday 00:00
  });

  it('the same instant is inside or outside depending on the zone', () => {
    const at = new Date('2026-03-02T15:00:00Z'); // Monday 16:00 in Amsterdam, 10:00 in New York, 00:00 Tuesday in Tokyo
    expect(withinTeamHours({ ...hours, time_zone: 'America/New_York' }, at)).toBe(true);
    expect(withinTeamHours({ ...hours, time_zone: 'Asia/Tokyo' }, at)).toBe(false);
  });

  it('refuse unknown zones, impossible times and ranges that end before they start', () => {
    expect(teamHoursProblems(hours)).toEqual([]);
    expect(teamHoursProblems({ time_zone: 'Mars/Olympus', week: {} })[0]).toMatchObject({ field: 'team_hours.time_zone' });
    expect(teamHoursProblems({ time_zone: '+01:00', week: {} })[0]).toMatchObject({ field: 'team_hours.time_zone' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { tue: [['25:00', '26:00']] } })[0]).toMatchObject({ field: 'team_hours.week.tue.0.0' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { tue: [['09:60', '10:00']] } })[0]).toMatchObject({ field: 'team_hours.week.tue.0.0' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { wed: [['18:00', '09:00']] } })[0]).toMatchObject({ field: 'team_hours.week.wed.0' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { wed: [['24:00', '24:00']] } })).toHaveLength(1);
  });

  it('availability: the switch and, when set, the hours (switch off is never overridden)', async () => {
    let state: { switchOn: boolean; teamHours: unknown } = { switchOn: true, teamHours: null };
    let now = Date.parse('2026-03-02T08:30:00Z');
    const available = createTeamAvailability({ phone: { teamState: async () => state }, now: () => now });
    expect(await available('w')).toBe(true); // switch on, no hours
    state = { switchOn: true, teamHours: hours };
    expect(await available('w')).toBe(true); // Monday 09:30
    now = Date.parse('2026-03-02T17:00:00Z');
    expect(await available('w')).toBe(false); // Monday 18:00
    state = { switchOn: false, teamHours: hours };
    now = Date.parse('2026-03-02T08:30:00Z');
    expect(await available('w')).toBe(false);
  });
});
