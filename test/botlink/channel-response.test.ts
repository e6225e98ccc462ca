import { describe, expect, it } from 'vitest';
import { bodyExcerpt, interpretChannelResponse, noAnswer } from '../../src/botlink/channel-response.ts';
import type { ChannelOutcome, NoAnswerReason } from '../../src/botlink/channel-response.ts';
import { BODY_EXCERPT_CHARS, MAX_EMAIL_CHARS, MAX_NAME_CHARS, MAX_REPLY_CHARS, MAX_RESPONSE_BYTES } from '../../src/limits.ts';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
const interpret = (value: unknown, status = 200): ChannelOutcome => interpretChannelResponse(status, json(value), false);
const codePoints = (s: string): number => Array.from(s).length;

function answerOf(outcome: ChannelOutcome) {
  if (outcome.outcome !== 'answer') throw new Error(`expected an answer, got ${JSON.stringify(outcome)}`);
  return outcome;
}
function noAnswerOf(outcome: ChannelOutcome) {
  if (outcome.outcome !== 'no_answer') throw new Error(`expected no answer, got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('a well-formed response is an answer (protocol §2.2)', () => {
  it('reads every field of protocol §2.2', () => {
    const outcome = interpret({
      reply: 'Your order ships today.',
      handled: true,
      handoff: 'forward',
      customer: { email: 'ann@example.com', name: 'Ann de Vries' },
    });
    expect(outcome).toEqual({
      outcome: 'answer',
      answer: {
        reply: 'Your order ships today.',
        handled: true,
        handoff: 'forward',
        customer: { email: 'ann@example.com', name: 'Ann de Vries' },
      },
      problems: [],
    });
  });

  it('defaults handled to true, handoff to null and customer to nothing', () => {
    expect(interpret({ reply: 'Hi' })).toEqual({
      outcome: 'answer',
      answer: { reply: 'Hi', handled: true, handoff: null, customer: {} },
      problems: [],
    });
  });

  it.each([200, 201, 203, 299])('accepts any 2xx status (%i)', (status) => {
    expect(interpret({ reply: 'Hi' }, status).outcome).toBe('answer');
  });

  it('ignores unknown fields without a problem', () => {
    const outcome = answerOf(interpret({ reply: 'Hi', confidence: 0.9, customer: { email: 'a@b.nl', vip: true }, meta: {} }));
    expect(outcome.problems).toEqual([]);
    expect(outcome.answer).toEqual({ reply: 'Hi', handled: true, handoff: null, customer: { email: 'a@b.nl' } });
  });

  it('accepts a UTF-8 byte order mark before the JSON', () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json({ reply: 'Hi' })]);
    expect(answerOf(interpretChannelResponse(200, body, false)).answer.reply).toBe('Hi');
  });

  it('keeps the reply as sent, newlines included', () => {
    expect(answerOf(interpret({ reply: '  Line 1\nLine 2 ' })).answer.reply).toBe('  Line 1\nLine 2 ');
  });
});

describe('what protocol §7 counts as no answer', () => {
  it.each([
    [500, { error: 'boom' }],
    [404, { reply: 'a reply with the wrong status still is none' }],
    [301, { reply: 'Hi' }],
    [199, { reply: 'Hi' }],
    [100, null],
  ])('HTTP %i is no answer, reason status', (status, value) => {
    const outcome = noAnswerOf(interpret(value, status));
    expect(outcome.reason).toBe('status');
    expect(outcome.message).toContain(`HTTP ${status}`);
  });

  it('keeps the JSON that came with an error status, for the dashboard', () => {
    expect(noAnswerOf(interpret({ error: 'boom' }, 503)).parsed).toEqual({ error: 'boom' });
    expect(noAnswerOf(interpretChannelResponse(503, Buffer.from('<html>'), false)).parsed).toBeUndefined();
  });

  it('a body cut at 64 KB is no answer, reason cut_off, even when its first bytes parse', () => {
    const body = json({ reply: 'Hi' });
    const outcome = noAnswerOf(interpretChannelResponse(200, body, true));
    expect(outcome.reason).toBe('cut_off');
    expect(outcome.message).toMatch(/64 KB.*cut off/);
    const big = Buffer.alloc(MAX_RESPONSE_BYTES, 'x');
    expect(noAnswerOf(interpretChannelResponse(200, big, true)).reason).toBe('cut_off');
  });

  it.each<[string, Buffer, RegExp]>([
    ['an empty body', Buffer.alloc(0), /empty/],
    ['whitespace', Buffer.from(' \n '), /empty/],
    ['text', Buffer.from('Your order ships today.'), /not valid JSON/],
    ['cut JSON', Buffer.from('{"reply":"Hi"'), /not valid JSON/],
    ['JSON with a trailing comma', Buffer.from('{"reply":"Hi",}'), /not valid JSON/],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /UTF-8/],
    ['a JSON array', json([{ reply: 'Hi' }]), /array, not an object/],
    ['a JSON string', json('Hi'), /string "Hi", not an object/],
    ['JSON null', json(null), /null, not an object/],
    ['a JSON number', json(42), /number 42, not an object/],
  ])('%s is no answer, reason invalid_json', (_name, body, message) => {
    const outcome = noAnswerOf(interpretChannelResponse(200, body, false));
    expect(outcome.reason).toBe('invalid_json');
    expect(outcome.message).toMatch(message);
  });

  it.each<[string, unknown, string]>([
    ['missing', { handled: true }, 'is missing'],
    ['empty', { reply: '' }, 'is empty'],
    ['only whitespace', { reply: ' \n\t\u00a0' }, 'is only whitespace'],
    ['a number', { reply: 42 }, 'must be a string, not the number 42'],
    ['null', { reply: null }, 'must be a string, not null'],
    ['an object', { reply: { text: 'Hi' } }, 'must be a string, not an object'],
    ['an array', { reply: ['Hi'] }, 'must be a string, not an array'],
    ['inherited, not its own', JSON.parse('{"__proto__":{"reply":"Hi"}}'), 'is missing'],
  ])('a reply that is %s is no answer, reason empty_reply, with a problem naming the field', (_name, value, message) => {
    const outcome = noAnswerOf(interpret(value));
    expect(outcome.reason).toBe('empty_reply');
    expect(outcome.problems).toContainEqual({ field: 'reply', message: `${message}; counts as no answer` });
    expect(outcome.message).toContain(message);
    expect(outcome.parsed).toEqual(value);
  });

  it('reports the other problems of a response without a reply too', () => {
    const outcome = noAnswerOf(interpret({ reply: '', handoff: 'now', customer: { email: 'x' } }));
    expect(outcome.problems.map((p) => p.field)).toEqual(['reply', 'handoff', 'customer.email']);
  });

  it('builds the no-answer outcomes of the HTTP client', () => {
    const reason: NoAnswerReason = 'timeout';
    expect(noAnswer(reason, 'No answer within 6 s.')).toEqual({
      outcome: 'no_answer',
      reason: 'timeout',
      message: 'No answer within 6 s.',
      problems: [],
    });
  });
});

describe('a reply longer than MAX_REPLY_CHARS is cut, with a problem (protocol §2.2: at most 2000 characters)', () => {
  it('keeps a reply of exactly the limit without a problem', () => {
    const reply = 'r'.repeat(MAX_REPLY_CHARS);
    const outcome = answerOf(interpret({ reply }));
    expect(outcome.answer.reply).toBe(reply);
    expect(outcome.problems).toEqual([]);
  });

  it('cuts a longer reply to the limit and records it', () => {
    const outcome = answerOf(interpret({ reply: 'r'.repeat(MAX_REPLY_CHARS + 500) }));
    expect(outcome.answer.reply).toBe('r'.repeat(MAX_REPLY_CHARS));
    expect(outcome.problems).toEqual([
      { field: 'reply', message: `is longer than ${MAX_REPLY_CHARS} characters; cut to ${MAX_REPLY_CHARS} characters` },
    ]);
  });

  it('counts characters as code points and never splits one', () => {
    const reply = '😀'.repeat(MAX_REPLY_CHARS);
    expect(answerOf(interpret({ reply })).problems).toEqual([]);
    const long = answerOf(interpret({ reply: `${'a'.repeat(MAX_REPLY_CHARS - 1)}😀😀` }));
    expect(long.answer.reply).toBe(`${'a'.repeat(MAX_REPLY_CHARS - 1)}😀`);
    expect(long.answer.reply.isWellFormed()).toBe(true);
  });

  it('replaces a lone surrogate escaped in the JSON', () => {
    const body = Buffer.from('{"reply":"Hi \\ud800 there"}');
    expect(answerOf(interpretChannelResponse(200, body, false)).answer.reply).toBe('Hi \ufffd there');
  });
});

describe('handled: only an explicit false is false (protocol §2.2)', () => {
  it.each<[string, unknown, boolean, boolean]>([
    ['absent', undefined, true, false],
    ['true', true, true, false],
    ['false', false, false, false],
    ['the string "false"', 'false', true, true],
    ['0', 0, true, true],
    ['null', null, true, true],
    ['an object', {}, true, true],
  ])('%s → %s', (_name, handled, expected, problem) => {
    const outcome = answerOf(interpret({ reply: 'Hi', handled }));
    expect(outcome.answer.handled).toBe(expected);
    if (problem) {
      expect(outcome.problems).toEqual([{ field: 'handled', message: expect.stringMatching(/^must be a boolean, not .+; treated as true$/) }]);
    } else {
      expect(outcome.problems).toEqual([]);
    }
  });
});

describe('handoff: invalid values are problems, not decisions (protocol §2.2)', () => {
  it.each<[string, unknown, 'human' | 'forward' | null, boolean]>([
    ['absent', undefined, null, false],
    ['null', null, null, false],
    ['human', 'human', 'human', false],
    ['forward', 'forward', 'forward', false],
    ['Human (case matters)', 'Human', null, true],
    ['an unknown word', 'transfer', null, true],
    ['empty', '', null, true],
    ['true', true, null, true],
    ['an object', { to: 'human' }, null, true],
  ])('%s → %s', (_name, handoff, expected, problem) => {
    const outcome = answerOf(interpret({ reply: 'Hi', handoff }));
    expect(outcome.answer.handoff).toBe(expected);
    expect(outcome.problems).toEqual(
      problem ? [{ field: 'handoff', message: expect.stringMatching(/^must be "human", "forward" or null, not .+; treated as null/) }] : [],
    );
  });
});

describe('customer.email: a valid address of at most MAX_EMAIL_CHARS characters, else dropped with a problem', () => {
  const domain = '@example.com';
  const emailOfLength = (n: number): string => `${'a'.repeat(n - domain.length)}${domain}`;

  it.each<[string, unknown, string | undefined, string | undefined]>([
    ['a valid address', 'ann@example.com', 'ann@example.com', undefined],
    ['exactly the limit', emailOfLength(MAX_EMAIL_CHARS), emailOfLength(MAX_EMAIL_CHARS), undefined],
    ['one over the limit', emailOfLength(MAX_EMAIL_CHARS + 1), undefined, `is longer than ${MAX_EMAIL_CHARS} characters; ignored`],
    ['not an address', 'not-an-email', undefined, 'is not a valid email address; ignored'],
    ['an address with a space', 'ann @example.com', undefined, 'is not a valid email address; ignored'],
    ['empty', '', undefined, 'is not a valid email address; ignored'],
    ['a number', 42, undefined, 'must be a string, not the number 42; ignored'],
    ['null (not known)', null, undefined, undefined],
  ])('%s', (_name, email, kept, problem) => {
    const outcome = answerOf(interpret({ reply: 'Hi', customer: { email } }));
    expect(outcome.answer.customer.email).toBe(kept);
    expect(outcome.problems).toEqual(problem ? [{ field: 'customer.email', message: problem }] : []);
  });

  it('reports both problems of an address that is too long and invalid, once', () => {
    const outcome = answerOf(interpret({ reply: 'Hi', customer: { email: 'x'.repeat(MAX_EMAIL_CHARS + 1) } }));
    expect(outcome.problems).toEqual([
      {
        field: 'customer.email',
        message: `is longer than ${MAX_EMAIL_CHARS} characters and is not a valid email address; ignored`,
      },
    ]);
  });
});

describe('customer.name: not blank, at most MAX_NAME_CHARS characters, trimmed; else dropped with a problem', () => {
  it.each<[string, unknown, string | undefined, string | undefined]>([
    ['a name', 'Ann de Vries', 'Ann de Vries', undefined],
    ['a name with spaces around it', '  Ann  ', 'Ann', undefined],
    ['exactly the limit', 'n'.repeat(MAX_NAME_CHARS), 'n'.repeat(MAX_NAME_CHARS), undefined],
    ['non-ASCII at the limit', 'ü'.repeat(MAX_NAME_CHARS), 'ü'.repeat(MAX_NAME_CHARS), undefined],
    ['one over the limit', 'n'.repeat(MAX_NAME_CHARS + 1), undefined, `is longer than ${MAX_NAME_CHARS} characters; ignored`],
    ['empty', '', undefined, 'is empty; ignored'],
    ['blank', '   ', undefined, 'is only whitespace; ignored'],
    ['an array', ['Ann'], undefined, 'must be a string, not an array; ignored'],
    ['null (not known)', null, undefined, undefined],
  ])('%s', (_name, name, kept, problem) => {
    const outcome = answerOf(interpret({ reply: 'Hi', customer: { name } }));
    expect(outcome.answer.customer.name).toBe(kept);
    expect(outcome.problems).toEqual(problem ? [{ field: 'customer.name', message: problem }] : []);
  });
});

describe('customer itself', () => {
  it.each<[string, unknown, string | undefined]>([
    ['a string', 'ann@example.com', 'must be an object, not the string "ann@example.com"; ignored'],
    ['an array', [{ email: 'ann@example.com' }], 'must be an object, not an array; ignored'],
    ['null (not known)', null, undefined],
  ])('that is %s', (_name, customer, problem) => {
    const outcome = answerOf(interpret({ reply: 'Hi', customer }));
    expect(outcome.answer.customer).toEqual({});
    expect(outcome.problems).toEqual(problem ? [{ field: 'customer', message: problem }] : []);
  });

  it('keeps the valid field when the other is wrong', () => {
    const outcome = answerOf(interpret({ reply: 'Hi', customer: { email: 'nope', name: 'Ann' } }));
    expect(outcome.answer.customer).toEqual({ name: 'Ann' });
    expect(outcome.problems.map((p) => p.field)).toEqual(['customer.email']);
  });
});

describe('every problem at once', () => {
  it('reports each wrong field and still answers', () => {
    const outcome = answerOf(
      interpret({
        reply: 'x'.repeat(MAX_REPLY_CHARS + 1),
        handled: 'yes',
        handoff: 'later',
        customer: { email: 'a@', name: '' },
      }),
    );
    expect(outcome.answer).toEqual({ reply: 'x'.repeat(MAX_REPLY_CHARS), handled: true, handoff: null, customer: {} });
    expect(outcome.problems.map((p) => p.field).sort()).toEqual(['customer.email', 'customer.name', 'handled', 'handoff', 'reply']);
  });
});

describe('bodyExcerpt: the start of a body for the dashboard', () => {
  it('returns a short body whole', () => {
    expect(bodyExcerpt(Buffer.from('{"reply":"Hi"}'))).toBe('{"reply":"Hi"}');
    expect(bodyExcerpt(Buffer.alloc(0))).toBe('');
  });

  it('cuts at BODY_EXCERPT_CHARS characters by default', () => {
    expect(bodyExcerpt(Buffer.alloc(MAX_RESPONSE_BYTES, 'x'))).toBe('x'.repeat(BODY_EXCERPT_CHARS));
  });

  it('counts characters, not bytes, and never splits one', () => {
    const body = Buffer.from('ü€😀'.repeat(100), 'utf8');
    expect(bodyExcerpt(body, 4)).toBe('ü€😀ü');
    expect(bodyExcerpt(body, 5)).toBe('ü€😀ü€');
    expect(codePoints(bodyExcerpt(body, 150))).toBe(150);
  });

  it('shows bytes that are not UTF-8 as U+FFFD', () => {
    expect(bodyExcerpt(Buffer.from([0x61, 0xff, 0x62]))).toBe('a\ufffdb');
  });

  it('gives nothing for a limit of 0', () => {
    expect(bodyExcerpt(Buffer.from('abc'), 0)).toBe('');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Fuzz: whatever arrives, interpretChannelResponse returns a well-formed outcome and never throws.

/** mulberry32: a small seeded PRNG, so a failing input can be reproduced. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NO_ANSWER_REASONS = new Set(['status', 'invalid_json', 'cut_off', 'empty_reply', 'invalid_response']);
const FIELD_NAMES = ['reply', 'handled', 'handoff', 'customer', 'email', 'name', 'sent_at', '__proto__', 'constructor', 'x'];
const STRINGS = ['', ' ', 'human', 'forward', 'Human', 'a@b.nl', 'not an email', 'false', 'true', '😀', '\ud800', 'null'];

function fuzzer(random: () => number) {
  const int = (n: number): number => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const string = (): string => {
    switch (int(4)) {
      case 0:
        return pick(STRINGS);
      case 1:
        return String.fromCodePoint(...Array.from({ length: int(12) }, () => int(0x11000)));
      case 2:
        return pick(['x', '😀', ' ', 'é']).repeat(int(MAX_REPLY_CHARS + 300));
      default:
        return `${'a'.repeat(int(300))}@example.com`;
    }
  };
  const value = (depth: number): unknown => {
    switch (int(depth > 2 ? 6 : 8)) {
      case 0:
        return null;
      case 1:
        return random() < 0.5;
      case 2:
        return pick([0, -1, 1.5, 1e308, 2 ** 53 + 1, 1735689600]);
      case 3:
      case 4:
        return string();
      case 5:
        return undefined;
      case 6:
        return Array.from({ length: int(4) }, () => value(depth + 1));
      default: {
        const object: Record<string, unknown> = {};
        for (let i = int(6); i > 0; i--) object[pick(FIELD_NAMES)] = value(depth + 1);
        return object;
      }
    }
  };
  const body = (): Buffer => {
    switch (int(5)) {
      case 0:
        return Buffer.from(Array.from({ length: int(200) }, () => int(256)));
      case 1: {
        // A valid JSON text with some bytes mangled.
        const bytes = Buffer.from(JSON.stringify(value(0)) ?? 'null');
        for (let i = int(3); i > 0 && bytes.length > 0; i--) bytes[int(bytes.length)] = int(256);
        return bytes;
      }
      default: {
        const response: Record<string, unknown> = {};
        for (const field of ['reply', 'handled', 'handoff', 'customer']) if (random() < 0.7) response[field] = value(1);
        if (random() < 0.5) response.reply = string();
        if (random() < 0.5) response.customer = { email: random() < 0.5 ? string() : value(2), name: random() < 0.5 ? string() : value(2) };
        return json(response);
      }
    }
  };
  const status = (): number => (random() < 0.8 ? 200 : pick([0, 100, 204, 299, 300, 404, 500, 599, -1, 1.5, Number.NaN]));
  return { body, status, truncated: () => random() < 0.05 };
}

function assertWellFormed(outcome: ChannelOutcome): void {
  expect(Array.isArray(outcome.problems)).toBe(true);
  for (const problem of outcome.problems) {
    expect(typeof problem.field).toBe('string');
    expect(problem.field.length).toBeGreaterThan(0);
    expect(typeof problem.message).toBe('string');
    expect(problem.message.length).toBeGreaterThan(0);
  }
  if (outcome.outcome === 'answer') {
    const { answer } = outcome;
    expect(typeof answer.reply).toBe('string');
    expect(answer.reply.trim()).not.toBe('');
    expect(codePoints(answer.reply)).toBeLessThanOrEqual(MAX_REPLY_CHARS);
    expect(answer.reply.isWellFormed()).toBe(true);
    expect(typeof answer.handled).toBe('boolean');
    expect([null, 'human', 'forward']).toContain(answer.handoff);
    expect(Object.keys(answer.customer).every((k) => k === 'email' || k === 'name')).toBe(true);
    if (answer.customer.email !== undefined) expect(codePoints(answer.customer.email)).toBeLessThanOrEqual(MAX_EMAIL_CHARS);
    if (answer.customer.name !== undefined) {
      expect(codePoints(answer.customer.name)).toBeLessThanOrEqual(MAX_NAME_CHARS);
      expect(answer.customer.name.trim()).toBe(answer.customer.name);
      expect(answer.customer.name).not.toBe('');
    }
  } else {
    expect(outcome.outcome).toBe('no_answer');
    expect(NO_ANSWER_REASONS.has(outcome.reason)).toBe(true);
    expect(outcome.reason).not.toBe('invalid_response'); // the safety net is never needed
    expect(typeof outcome.message).toBe('string');
    expect(outcome.message.length).toBeGreaterThan(0);
  }
}

describe('interpretChannelResponse never throws (fuzz, seeded)', () => {
  it.each([1, 2, 3])('returns a well-formed outcome for 1500 random responses (seed %i)', (seed) => {
    const random = prng(seed);
    const fuzz = fuzzer(random);
    const seen = new Set<string>();
    for (let i = 0; i < 1500; i++) {
      const status = fuzz.status();
      const body = fuzz.body();
      const truncated = fuzz.truncated();
      let outcome: ChannelOutcome | undefined;
      expect(() => {
        outcome = interpretChannelResponse(status, body, truncated);
      }, `seed ${seed}, input ${i}: ${body.toString('base64')}`).not.toThrow();
      assertWellFormed(outcome!);
      seen.add(outcome!.outcome === 'answer' ? 'answer' : outcome!.reason);
    }
    // The inputs reach every branch, so the loop tests something.
    expect([...seen].sort()).toEqual(['answer', 'cut_off', 'empty_reply', 'invalid_json', 'status']);
  });
});
