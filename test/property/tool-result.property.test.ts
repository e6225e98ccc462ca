/**
 * What a tool call answers (protocol §2.5, §7.3), as properties: whatever comes back, reading it gives a verdict and never
 * throws; the content the AI reads (and the turn keeps) follows the outside-text rule (src/text/outside-text.ts) and
 * is otherwise the result as sent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutToChars } from '../../src/text/cut.ts';
import { interpretToolResponse, MAX_TOOL_ERROR_CHARS } from '../../src/botlink/tools-client.ts';
import { MAX_RESPONSE_BYTES, MAX_TOOL_RESULT_CHARS } from '../../src/limits.ts';
import { cleanJson, cleanText } from '../../src/text/outside-text.ts';
import { expectAllClean, nestedJsonText, outsideJson, outsideText } from './outside.ts';

const FAILURES = ['tool_error', 'status', 'invalid_response'];
const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
const read = (body: Buffer, status = 200, truncated = false) => interpretToolResponse('order_status', { status, body, truncated });

type Verdict = ReturnType<typeof interpretToolResponse>;

function expectVerdict(verdict: Verdict): void {
  expect(typeof verdict.ok).toBe('boolean');
  expect(typeof verdict.content).toBe('string');
  if (verdict.ok) {
    expect(verdict.failure).toBeUndefined();
    expect(Array.from(verdict.content).length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
  } else {
    expect(FAILURES).toContain(verdict.failure);
    expect(verdict.content).not.toBe('');
  }
}

const answerShaped = fc.oneof(
  fc.record({ ok: fc.constant(true), result: fc.oneof(outsideText(), outsideText({ minLength: MAX_TOOL_RESULT_CHARS - 5, maxLength: MAX_TOOL_RESULT_CHARS + 20 }), outsideJson()) }, { requiredKeys: ['ok'] }),
  fc.record({ ok: fc.constant(false), error: fc.oneof(outsideText(), outsideText({ minLength: MAX_TOOL_ERROR_CHARS, maxLength: MAX_TOOL_ERROR_CHARS + 20 }), outsideJson(1)) }, { requiredKeys: ['ok'] }),
  fc.record({ ok: outsideJson(1), result: outsideJson(), error: outsideJson() }, { requiredKeys: [] }),
);

describe('a tool call result, whatever the integrator answers', () => {
  it('property: any status, any bytes, cut or not: a verdict, never a throw', () => {
    const body = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), outsideJson().map(json), answerShaped.map(json));
    fc.assert(
      fc.property(fc.oneof(fc.constant(200), fc.integer({ min: 100, max: 599 })), body, fc.boolean(), (status, bytes, truncated) => {
        expectVerdict(read(bytes, status, truncated));
      }),
      { numRuns: 300 },
    );
  });

  it('property: the content holds no U+0000 or lone surrogate, and is the result or error as sent otherwise', () => {
    fc.assert(
      fc.property(answerShaped, (answer) => {
        const verdict = read(json(answer));
        expectVerdict(verdict);
        expectAllClean(verdict);
        const sent = cleanJson(structuredClone(answer) as Record<string, unknown>);
        if (sent.ok === true) {
          const result = Object.hasOwn(sent, 'result') ? sent.result : null;
          expect(verdict).toEqual({ ok: true, content: cutToChars(typeof result === 'string' ? result : JSON.stringify(result), MAX_TOOL_RESULT_CHARS) });
        } else if (sent.ok === false && typeof sent.error === 'string' && sent.error.trim() !== '') {
          expect(verdict).toEqual({ ok: false, failure: 'tool_error', content: cutToChars(cleanText(sent.error), MAX_TOOL_ERROR_CHARS) });
        }
      }),
      { numRuns: 300 },
    );
  });

  it('property: a result nested thousands of levels deep is a verdict (unreadable past what JSON can write out again)', () => {
    const maxDepth = Math.floor((MAX_RESPONSE_BYTES - 100) / 6);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: maxDepth }), fc.constantFrom('result', 'error', 'ok'), (depth, where) => {
        const deep = nestedJsonText(depth, '"\\u0000"');
        const text = { result: `{"ok":true,"result":${deep}}`, error: `{"ok":false,"error":${deep}}`, ok: `{"ok":${deep}}` }[where];
        const verdict = read(Buffer.from(text, 'utf8'));
        expectVerdict(verdict);
        expectAllClean(verdict);
        if (where === 'error') expect(verdict.failure).toBe('tool_error');
        if (where === 'ok') expect(verdict.failure).toBe('invalid_response');
      }),
      { numRuns: 60 },
    );
  });

  it('a result 10,000 levels deep (60 KB) is unreadable, not a crash', () => {
    const verdict = read(Buffer.from(`{"ok":true,"result":${nestedJsonText(10_000, '1')}}`, 'utf8'));
    expect(verdict).toMatchObject({ ok: false, failure: 'invalid_response' });
  });
});
