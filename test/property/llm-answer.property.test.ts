/**
 * The LLM's answers (an OpenAI-compatible API, src/ai), as properties: whatever the model or its server sends, whole
 * or streamed, reading it gives a step or an AiError, nothing else; the step's text, tool names and tool arguments
 * follow the outside-text rule (src/text/outside-text.ts) and stay storable as JSON with the turn; what is spoken while
 * streaming is clean too. Over HTTPS, the adapter itself holds to the same.
 */
import type { ServerResponse } from 'node:http';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { contentText, readChatCompletion } from '../../src/ai/chat-completion.ts';
import { createChatStreamReader } from '../../src/ai/chat-stream.ts';
import { AiError, errorExcerpt, type OpenAiAdapter } from '../../src/ai/openai-adapter.ts';
import { LLM_ERROR_EXCERPT_CHARS } from '../../src/ai/limits.ts';
import type { AiStep, AiStepInput } from '../../src/ai/types.ts';
import { cleanJson, cleanText, isCleanText } from '../../src/text/outside-text.ts';
import { useLlmServer } from '../helpers/llm-server.ts';
import { dirtyText, expectAllClean, nestedJsonText, outsideJson, outsideText, OVER_HTTP } from './outside.ts';

const anyField = fc.oneof(outsideText(), outsideJson(2));
const content = fc.oneof(
  outsideText(),
  dirtyText,
  fc.tuple(outsideText(), outsideText()).map(([thought, said]) => `<think>${thought}</think>${said}`),
  fc.array(fc.oneof(fc.record({ type: fc.constant('text'), text: outsideText() }), anyField), { maxLength: 3 }),
  anyField,
);
const toolArguments = fc.oneof(
  outsideJson(3).map((v) => JSON.stringify(v)),
  fc.dictionary(outsideText(), anyField, { maxKeys: 3 }).map((v) => JSON.stringify(v)),
  outsideText(),
  fc.integer({ min: 17, max: 20_000 }).map((depth) => nestedJsonText(depth, '"\\u0000"')),
  outsideJson(3),
);
const toolCall = fc.oneof(
  fc.record(
    { id: fc.oneof(outsideText(), anyField), type: fc.oneof(fc.constant('function'), anyField), function: fc.oneof(fc.record({ name: fc.oneof(fc.constant('order_status'), outsideText(), dirtyText), arguments: toolArguments }, { requiredKeys: [] }), anyField) },
    { requiredKeys: ['function'] },
  ),
  anyField,
);
const message = fc.record({ role: fc.constant('assistant'), content, tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 4 }), anyField) }, { requiredKeys: [] });
const completion = fc.oneof(
  { weight: 4, arbitrary: fc.record({ id: anyField, choices: fc.array(fc.record({ index: fc.nat(), message, finish_reason: anyField }, { requiredKeys: ['message'] }), { minLength: 1, maxLength: 2 }) }, { requiredKeys: ['choices'] }) },
  { weight: 1, arbitrary: outsideJson() },
);

/** The step, or the AiError it failed with; any other throw fails the test. */
function stepOf(read: () => AiStep): AiStep | AiError {
  try {
    return read();
  } catch (err) {
    if (err instanceof AiError) return err;
    throw err;
  }
}

/** What the session does with a step: keeps it with the turn as JSON, so it must write out and hold nothing unstorable. */
function expectStorable(step: AiStep | AiError): void {
  if (step instanceof AiError) {
    expect(isCleanText(step.message)).toBe(true);
    return;
  }
  expectAllClean(step);
  // A real \u escape of U+0000 or a surrogate half, not the text "\\u0000" (whose backslash is itself escaped).
  expect(JSON.stringify(step)).not.toMatch(/(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i);
  if (step.kind === 'answer') expect(step.text).not.toBe('');
  else for (const call of step.calls) expect(call.name).not.toBe('');
}

describe("the LLM's answer, read whole", () => {
  it('property: any body: a step or an AiError, never another throw, and storable', () => {
    const body = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b)), completion.map((c) => Buffer.from(JSON.stringify(c), 'utf8')));
    fc.assert(
      fc.property(body, fc.boolean(), (bytes, toolsOffered) => expectStorable(stepOf(() => readChatCompletion(bytes, { toolsOffered, round: 0 })))),
      { numRuns: 400 },
    );
  });

  it('property: the answer is the content as sent, with only U+0000 and lone surrogates replaced', () => {
    fc.assert(
      fc.property(content, (sent) => {
        const body = Buffer.from(JSON.stringify({ choices: [{ message: { role: 'assistant', content: sent } }] }), 'utf8');
        const step = stepOf(() => readChatCompletion(body, { toolsOffered: false, round: 0 }));
        const expected = contentText(cleanJson(structuredClone(sent)));
        if (expected === '') expect(step).toMatchObject({ reason: 'empty' });
        else expect(step).toEqual({ kind: 'answer', text: expected, source: 'ai' });
      }),
      { numRuns: 300 },
    );
  });

  it('property: tool calls keep their names as sent (cleaned) and arguments the turn can store, at any depth', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ name: fc.oneof(outsideText({ minLength: 1 }), dirtyText), arguments: toolArguments }), { minLength: 1, maxLength: 3 }), (calls) => {
        const body = { choices: [{ message: { role: 'assistant', content: null, tool_calls: calls.map((fn, i) => ({ id: `call_${i}`, type: 'function', function: fn })) } }] };
        const step = stepOf(() => readChatCompletion(Buffer.from(JSON.stringify(body), 'utf8'), { toolsOffered: true, round: 0 }));
        expectStorable(step);
        if (step instanceof AiError || step.kind !== 'tool_calls') return expect.fail(`expected tool calls, got ${String(step)}`);
        expect(step.calls.map((c) => c.name)).toEqual(calls.map((c) => cleanText(c.name)));
      }),
      { numRuns: 200 },
    );
  });

  it('property: the excerpt of an error body is clean, short and never cuts a character', () => {
    const body = fc.oneof(outsideText(), outsideText({ minLength: 290, maxLength: 320 }), fc.record({ error: fc.record({ message: fc.oneof(outsideText(), outsideText({ minLength: 290, maxLength: 320 })) }) }).map((v) => JSON.stringify(v)));
    fc.assert(
      fc.property(body, (text) => {
        const excerpt = errorExcerpt(Buffer.from(text, 'utf8'));
        expect(isCleanText(excerpt)).toBe(true);
        expect(Array.from(excerpt).length).toBeLessThanOrEqual(LLM_ERROR_EXCERPT_CHARS + 2);
      }),
      { numRuns: 300 },
    );
  });
});

/** A stream of `data:` events, one per chunk, written as a server would (and optionally Meta-like \u escapes). */
function sse(chunks: unknown[]): string {
  return `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`;
}
const delta = (d: Record<string, unknown>) => ({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: d }] });

/** The bytes of `text` cut at the given fractions of its length: mid-line, mid-character, anywhere. */
function cutBytes(text: string, cuts: number[]): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let at = 0;
  for (const p of points) {
    parts.push(bytes.subarray(at, p));
    at = p;
  }
  parts.push(bytes.subarray(at));
  return parts;
}

describe("the LLM's answer, streamed", () => {
  const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 });

  it('property: content in any pieces, cut anywhere: what is spoken and the answer are clean, and the answer is what was sent', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(outsideText(), dirtyText, fc.constantFrom('. ', 'Yes. ', '<think>', '</think>')), { minLength: 1, maxLength: 8 }), cuts, (pieces, at) => {
        const spoken: string[] = [];
        const reader = createChatStreamReader({ toolsOffered: false, round: 0, onText: (piece) => spoken.push(piece) });
        const step = stepOf(() => {
          for (const part of cutBytes(sse(pieces.map((p) => delta({ content: p }))), at)) if (reader.push(part)) break;
          return reader.end();
        });
        for (const piece of spoken) expect(isCleanText(piece), JSON.stringify(piece)).toBe(true);
        expectStorable(step);
        // Each event is cleaned on its own (two halves of a pair in two events are two U+FFFD).
        const expected = contentText(pieces.map(cleanText).join(''));
        if (expected === '') expect(step).toMatchObject({ reason: 'empty' });
        else expect(step).toMatchObject({ kind: 'answer', text: expected });
      }),
      { numRuns: 300 },
    );
  });

  it('property: any events, tool-call fragments and error events: a step or an AiError, never another throw, and storable', () => {
    const fragment = fc.record({ index: fc.oneof(fc.nat(3), anyField), id: fc.oneof(outsideText(), anyField), type: anyField, function: fc.record({ name: fc.oneof(outsideText(), dirtyText), arguments: fc.oneof(outsideText(), dirtyText, outsideJson(2)) }, { requiredKeys: [] }) }, { requiredKeys: [] });
    const event = fc.oneof(
      content.map((c) => delta({ content: c })),
      fc.array(fragment, { maxLength: 3 }).map((f) => delta({ tool_calls: f })),
      fc.record({ error: fc.record({ message: fc.oneof(outsideText(), dirtyText, outsideText({ minLength: 295, maxLength: 310 })) }) }),
      outsideJson(),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 6 }), cuts, fc.boolean(), (events, at, toolsOffered) => {
        const spoken: string[] = [];
        const reader = createChatStreamReader({ toolsOffered, round: 1, onText: (piece) => spoken.push(piece) });
        const step = stepOf(() => {
          for (const part of cutBytes(sse(events), at)) if (reader.push(part)) break;
          return reader.end();
        });
        for (const piece of spoken) expect(isCleanText(piece)).toBe(true);
        expectStorable(step);
        if (step instanceof AiError) {
          const sofar = reader.spokenSoFar(step.reason);
          if (sofar !== null) expectStorable(sofar);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tool-call arguments sent already parsed and nested 10,000 levels deep are an AiError, not a RangeError', () => {
    const reader = createChatStreamReader({ toolsOffered: true, round: 0, onText: () => {} });
    const event = `data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"t","arguments":${nestedJsonText(10_000, '1')}}}]}}]}\n\n`;
    expect(() => reader.push(Buffer.from(event, 'utf8'))).toThrow(AiError);
  });
});

describe('the adapter over HTTPS, whatever the LLM server answers', () => {
  const server = useLlmServer();
  let adapter: OpenAiAdapter;
  beforeAll(() => {
    adapter = server.make();
  });
  const input = (overrides: Partial<AiStepInput> = {}): AiStepInput => ({
    channel: 'phone',
    language: 'en',
    message: 'When are you open?',
    history: [],
    passages: [],
    integratorContext: null,
    tools: [{ name: 'order_status', description: 'Order status.', parameters: { type: 'object', properties: { order: { type: 'string' } } } }],
    rounds: [],
    ...overrides,
  });

  it('property: a whole or streamed answer, or an error status, with any text: a clean step or a clean AiError', async () => {
    const answer = fc.record({ status: fc.constantFrom(200, 200, 200, 400, 500), stream: fc.boolean(), completion, pieces: fc.array(fc.oneof(outsideText(), dirtyText), { minLength: 1, maxLength: 4 }), errorBody: fc.oneof(outsideText(), dirtyText.map((m) => JSON.stringify({ error: { message: m } }))) });
    await fc.assert(
      fc.asyncProperty(answer, async ({ status, stream, completion: whole, pieces, errorBody }) => {
        server.llm.handle((_req, res: ServerResponse) => {
          if (status !== 200) {
            res.writeHead(status, { 'content-type': 'application/json' });
            return void res.end(errorBody);
          }
          if (stream) {
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            return void res.end(sse(pieces.map((p) => delta({ content: p }))));
          }
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(whole));
        });
        const spoken: string[] = [];
        let step: AiStep | AiError;
        try {
          step = await adapter.step(input(stream ? { onText: (piece) => spoken.push(piece) } : {}));
        } catch (err) {
          if (!(err instanceof AiError)) throw err;
          step = err;
        }
        expectStorable(step);
        for (const piece of spoken) expect(isCleanText(piece)).toBe(true);
        if (status !== 200) expect(step).toMatchObject({ reason: 'status' });
      }),
      { numRuns: 30, ...OVER_HTTP },
    );
  });
});
