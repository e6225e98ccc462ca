import { describe, expect, it } from 'vitest';
import { parseFrame, parseHandoffData } from '../../../src/channels/phone/frames.ts';

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
