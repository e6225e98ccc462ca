/**
 * ConversationRelay frames from the phone bridge (src/channels/phone/frames.ts), as properties: whatever text a frame
 * holds, parsing gives a typed frame or a typed reason to drop it, never a throw; every string in a frame follows the
 * outside-text rule (src/text/outside-text.ts) and is otherwise as sent, cut where the parser cuts, never inside a
 * character. The same holds for the HandoffData that Twilio hands back to our <Connect> action.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFrame, parseHandoffData, type ParsedFrame } from '../../src/channels/phone/frames.ts';
import { cleanText, isCleanText } from '../../src/text/outside-text.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText } from './outside.ts';

const DROP_REASONS = ['invalid_json', 'not_an_object', 'unknown_type', 'invalid_fields'];

const anyField = fc.oneof(outsideText(), outsideJson(2));
const id = fc.oneof(outsideText({ minLength: 1, maxLength: 40 }), dirtyText, fc.constant('CA0123456789abcdef0123456789abcdef'));
/** Frames of every type, each field outside text or any JSON value, any of them left out. */
const frameShaped = fc.oneof(
  fc.record(
    {
      type: fc.constant('setup'),
      sessionId: fc.oneof(id, anyField),
      callSid: fc.oneof(id, anyField),
      from: fc.oneof(id, anyField),
      to: fc.oneof(id, fc.constant('+31201234567'), anyField),
      customParameters: fc.oneof(
        fc.dictionary(fc.oneof(outsideText(), outsideText({ minLength: 120, maxLength: 140 })), fc.oneof(outsideText(), outsideText({ minLength: 990, maxLength: 1010 }), fc.integer(), fc.boolean(), outsideJson(1)), { maxKeys: 6 }),
        anyField,
      ),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({ type: fc.constant('prompt'), voicePrompt: fc.oneof(outsideText(), anyField), lang: fc.oneof(fc.constantFrom('nl-NL', 'en-US', null), anyField), last: fc.oneof(fc.boolean(), anyField) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('interrupt'), utteranceUntilInterrupt: fc.oneof(outsideText(), anyField), durationUntilInterruptMs: fc.oneof(fc.double(), anyField) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('dtmf'), digit: fc.oneof(fc.constantFrom('1', '#', '*', 'a'), anyField) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('error'), description: fc.oneof(outsideText(), outsideText({ minLength: 495, maxLength: 510 }), anyField) }, { requiredKeys: ['type'] }),
  fc.record({ type: anyField }, { requiredKeys: [] }),
);

function expectTyped(parsed: ParsedFrame): void {
  if (!parsed.ok) {
    expect(DROP_REASONS).toContain(parsed.reason);
    expect(typeof parsed.detail).toBe('string');
    return;
  }
  const frame = parsed.frame;
  switch (frame.type) {
    case 'setup':
      expect(frame.callSid.length).toBeGreaterThan(0);
      expect(typeof frame.from === 'string' && typeof frame.to === 'string').toBe(true);
      for (const value of Object.values(frame.customParameters)) expect(typeof value).toBe('string');
      break;
    case 'prompt':
      expect(typeof frame.voicePrompt).toBe('string');
      expect(typeof frame.last).toBe('boolean');
      break;
    case 'interrupt':
      if (frame.durationUntilInterruptMs !== null) expect(Number.isFinite(frame.durationUntilInterruptMs)).toBe(true);
      break;
    case 'dtmf':
      expect(frame.digit).toMatch(/^[0-9*#A-D]$/);
      break;
    case 'error':
      expect(typeof frame.description).toBe('string');
      break;
    default:
      expect.fail(`unknown frame type ${JSON.stringify(frame)}`);
  }
}

describe('ConversationRelay frames, whatever the bridge sends', () => {
  it('property: any text, any JSON, any frame-shaped object: a typed frame or a drop reason, never a throw', () => {
    const text = fc.oneof(outsideText(), outsideJson().map((v) => JSON.stringify(v)), frameShaped.map((v) => JSON.stringify(v)));
    fc.assert(
      fc.property(text, (frameText) => expectTyped(parseFrame(frameText))),
      { numRuns: 500 },
    );
  });

  it('property: no string in a parsed frame holds U+0000 or a lone surrogate', () => {
    fc.assert(
      fc.property(frameShaped, (frame) => {
        const parsed = parseFrame(JSON.stringify(frame));
        expectTyped(parsed);
        expectAllClean(parsed);
      }),
      { numRuns: 500 },
    );
  });

  it('property: what the caller said, and the ids of the call, arrive as sent with only U+0000 and lone surrogates replaced', () => {
    fc.assert(
      fc.property(outsideText(), id, outsideText({ maxLength: 30 }), (voicePrompt, callSid, from) => {
        expect(parseFrame(JSON.stringify({ type: 'prompt', voicePrompt, last: true }))).toEqual({
          ok: true,
          frame: { type: 'prompt', voicePrompt: cleanText(voicePrompt), lang: null, last: true },
        });
        expect(parseFrame(JSON.stringify({ type: 'setup', callSid, from, to: '+31201234567' }))).toEqual({
          ok: true,
          frame: { type: 'setup', sessionId: null, callSid: cleanText(callSid), from: cleanText(from), to: '+31201234567', customParameters: {} },
        });
        expect(parseFrame(JSON.stringify({ type: 'interrupt', utteranceUntilInterrupt: voicePrompt }))).toMatchObject({
          ok: true,
          frame: { utteranceUntilInterrupt: cleanText(voicePrompt) },
        });
      }),
      { numRuns: 300 },
    );
  });

  it('property: a cut custom parameter or error description is a prefix of the text sent, never half a character', () => {
    const long = fc.oneof(outsideText({ minLength: 990, maxLength: 1010 }), fc.string({ unit: fc.constantFrom('😀', 'a', '\u0000'), minLength: 495, maxLength: 1005 }));
    fc.assert(
      fc.property(long, long, (name, value) => {
        const setup = parseFrame(JSON.stringify({ type: 'setup', callSid: 'CA1', to: '+31201234567', customParameters: { [name]: value } }));
        if (!setup.ok || setup.frame.type !== 'setup') return expect.fail('a setup frame');
        const [[key, kept]] = Object.entries(setup.frame.customParameters) as [[string, string]];
        for (const [cut, sent, max] of [[key, name, 128], [kept, value, 1000]] as const) {
          expect(isCleanText(cut)).toBe(true);
          expect(cleanText(sent).startsWith(cut)).toBe(true);
          expect(cut.length).toBeGreaterThanOrEqual(Math.min(cleanText(sent).length, max - 1));
        }
        const error = parseFrame(JSON.stringify({ type: 'error', description: value }));
        if (!error.ok || error.frame.type !== 'error') return expect.fail('an error frame');
        expect(isCleanText(error.frame.description) && cleanText(value).startsWith(error.frame.description)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps a custom parameter named __proto__ as a parameter, not as the prototype', () => {
    const parsed = parseFrame('{"type":"setup","callSid":"CA1","to":"+31201234567","customParameters":{"__proto__":"x","lang":"nl"}}');
    if (!parsed.ok || parsed.frame.type !== 'setup') return expect.fail('a setup frame');
    expect(Object.entries(parsed.frame.customParameters)).toEqual([['__proto__', 'x'], ['lang', 'nl']]);
    expect(Object.getPrototypeOf(parsed.frame.customParameters)).toBe(Object.prototype);
  });

  it('property: a frame nested thousands of levels deep, in any field, is typed or dropped, never a throw', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('voicePrompt', 'callSid', 'customParameters', 'type', 'description'), (depth, field) => {
        const deep = nestedJsonText(depth, '"\\u0000"');
        const frame = {
          voicePrompt: `{"type":"prompt","voicePrompt":${deep}}`,
          callSid: `{"type":"setup","callSid":${deep},"to":"+31201234567"}`,
          customParameters: `{"type":"setup","callSid":"CA1","to":"+31201234567","customParameters":{"a":${deep},"b":"\\u0000"}}`,
          type: `{"type":${deep}}`,
          description: `{"type":"error","description":${deep}}`,
        }[field];
        const parsed = parseFrame(frame);
        expectTyped(parsed);
        expectAllClean(parsed);
      }),
      { numRuns: 60 },
    );
  });
});

describe("the HandoffData Twilio hands back to our <Connect> action", () => {
  it('property: any value is our handoff or null, never a throw, and its session id is clean', () => {
    const handoffShaped = fc.record({ reason: fc.oneof(fc.constantFrom('human', 'forward', 'reconnect'), anyField), session_id: fc.oneof(outsideText(), anyField) }, { requiredKeys: [] });
    const value = fc.oneof(outsideText(), handoffShaped.map((v) => JSON.stringify(v)), outsideJson(), fc.integer().map((n) => nestedJsonText(n % 10_000, '1')));
    fc.assert(
      fc.property(value, (data) => {
        const handoff = parseHandoffData(data);
        if (handoff === null) return;
        expect(['human', 'forward', 'reconnect']).toContain(handoff.reason);
        expect(isCleanText(handoff.session_id)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
