import type { ServerResponse } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedAnswerer } from '../../src/ai/embedded-answerer.ts';
import { withFallback } from '../../src/ai/index.ts';
import type { OpenAiAdapter } from '../../src/ai/openai-adapter.ts';
import { AiError } from '../../src/ai/openai-adapter.ts';
import { MAX_STREAMED_CHARS } from '../../src/ai/limits.ts';
import type { AiStepInput } from '../../src/ai/types.ts';
import type { ToolSpec } from '../../src/botlink/tools-types.ts';
import { sendJson, type TestHttpsServer } from '../helpers/https-server.ts';
import { useLlmServer } from '../helpers/llm-server.ts';

// ── The adapter over a real HTTPS stream ─────────────────────────────────────────────────────────────────────────

function input(overrides: Partial<AiStepInput> = {}): AiStepInput {
  return { channel: 'phone', language: 'en', message: 'When are you open?', history: [], passages: [], integratorContext: null, tools: [], rounds: [], ...overrides };
}

const orderStatus: ToolSpec = { name: 'order_status', description: 'Order status.', parameters: { type: 'object', properties: { order: { type: 'string' } } } };

function chunk(delta: Record<string, unknown>): string {
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
}

/** A server's handler that streams these events and then drops the connection. */
function breakingAfter(...events: string[]) {
  return (_req: unknown, res: ServerResponse) => {
    startStream(res);
    for (const e of events) res.write(e);
    setTimeout(() => res.socket?.destroy(), 20);
  };
}

describe('the OpenAI-compatible adapter streams when asked to (onText)', () => {
  const server = useLlmServer();
  const make = server.make.bind(server);
  let llm: TestHttpsServer;
  let adapter: OpenAiAdapter;

  beforeAll(() => {
    llm = server.llm;
    adapter = make();
  });

  it('asks for a stream and speaks the first sentence before the model has written the second', async () => {
    let firstHeard!: () => void;
    const heard = new Promise<void>((resolve) => (firstHeard = resolve));
    llm.handle(async (_req, res) => {
      startStream(res);
      res.write(chunk({ role: 'assistant', content: '' }));
      res.write(chunk({ content: 'We are open ' }));
      res.write(chunk({ content: 'until 17:00. On ' }));
      // The server goes on only once the client has spoken the first sentence: the stream is really used as it comes.
      await heard;
      res.write(chunk({ content: 'Saturday until 12:00.' }));
      res.write('data: [DONE]\n\n');
      res.end();
    });
    const pieces: string[] = [];
    const step = await adapter.step(
      input({
        onText: (piece) => {
          pieces.push(piece);
          firstHeard();
        },
      }),
    );
    const request = JSON.parse(llm.requests.at(-1)!.body.toString()) as { stream?: boolean };
    expect(request.stream).toBe(true);
    expect(llm.requests.at(-1)!.headers.accept).toContain('text/event-stream');
    expect(pieces).toEqual(['We are open until 17:00.']);
    expect(step).toEqual({ kind: 'answer', source: 'ai', text: 'We are open until 17:00. On Saturday until 12:00.', streamed: 'We are open until 17:00. '.length });
  });

  it("leaves a reasoning model's <think> block out, even when its tag arrives in pieces", async () => {
    llm.handle((_req, res) => {
      startStream(res);
      for (const c of ['<thi', 'nk>The user wants hours. ', 'Say 9. </th', 'ink>', ' We open at 9. ', 'Welcome here!']) res.write(chunk({ content: c }));
      res.end('data: [DONE]\n\n');
    });
    const pieces: string[] = [];
    const step = await adapter.step(input({ onText: (p) => pieces.push(p) }));
    expect(pieces).toEqual(['We open at 9.']);
    expect(step).toMatchObject({ kind: 'answer', text: 'We open at 9. Welcome here!', streamed: 'We open at 9. '.length });
  });

  it('puts streamed tool calls together from their fragments and speaks nothing of that step', async () => {
    llm.handle((_req, res) => {
      startStream(res);
      res.write(chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'order_status', arguments: '' } }] }));
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"order":' } }] }));
      res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: '"A-17"}' } }] }));
      res.write(chunk({ content: 'Checking. One moment please.' }));
      res.end('data: [DONE]\n\n');
    });
    const pieces: string[] = [];
    const step = await adapter.step(input({ tools: [orderStatus], onText: (p) => pieces.push(p) }));
    expect(step).toEqual({ kind: 'tool_calls', calls: [{ id: 'call_a', name: 'order_status', args: { order: 'A-17' } }] });
    expect(pieces).toEqual([]);
  });

  it('what the model said before calling a tool is spoken and reported as said', async () => {
    llm.handle((_req, res) => {
      startStream(res);
      res.write(chunk({ content: 'Let me look that up. ' }));
      res.write(chunk({ content: 'Just a second' }));
      res.write(chunk({ tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'order_status', arguments: '{}' } }] }));
      res.end('data: [DONE]\n\n');
    });
    const pieces: string[] = [];
    const step = await adapter.step(input({ tools: [orderStatus], onText: (p) => pieces.push(p) }));
    expect(pieces).toEqual(['Let me look that up.']);
    expect(step).toEqual({ kind: 'tool_calls', calls: [{ id: 'call_b', name: 'order_status', args: {} }], said: 'Let me look that up.' });
  });

  it('a server that ignores stream:true and answers JSON is read as usual (nothing streamed)', async () => {
    llm.handle((_req, res) => sendJson(res, 200, { choices: [{ message: { role: 'assistant', content: 'Open at nine. Closed on Sunday.' } }] }));
    const pieces: string[] = [];
    await expect(adapter.step(input({ onText: (p) => pieces.push(p) }))).resolves.toEqual({ kind: 'answer', source: 'ai', text: 'Open at nine. Closed on Sunday.' });
    expect(pieces).toEqual([]);
  });

  it('a stream that breaks off after a spoken sentence keeps what was spoken as the answer (no second answer)', async () => {
    llm.handle(breakingAfter(chunk({ content: 'Your parcel left today. It will' })));
    const failures: unknown[] = [];
    const ai = withFallback(adapter, createEmbeddedAnswerer(), (err) => failures.push(err));
    const pieces: string[] = [];
    const step = await ai.step(input({ onText: (p) => pieces.push(p) }));
    expect(pieces).toEqual(['Your parcel left today.']);
    expect(step).toEqual({ kind: 'answer', source: 'ai', text: 'Your parcel left today.', streamed: 'Your parcel left today.'.length, cut: 'connection' });
    expect(failures).toEqual([]);
  });

  it('a stream that breaks off before any sentence was spoken fails, so the fallback answers in full', async () => {
    llm.handle(breakingAfter(chunk({ content: 'Your parcel' })));
    const failures: AiError[] = [];
    const ai = withFallback(adapter, createEmbeddedAnswerer(), (err) => failures.push(err as AiError));
    const step = await ai.step(input({ onText: () => {} }));
    expect(step).toMatchObject({ kind: 'answer', source: 'fallback' });
    expect(failures.map((f) => f.reason)).toEqual(['connection']);
  });

  it('an error event in the stream, a non-JSON event, and the byte cap are AiErrors', async () => {
    llm.handle((_req, res) => {
      startStream(res);
      res.end('data: {"error":{"message":"context length exceeded"}}\n\n');
    });
    const err = await adapter.step(input({ onText: () => {} })).catch((e: unknown) => e as AiError);
    expect(err).toBeInstanceOf(AiError);
    expect(err).toMatchObject({ reason: 'invalid_response', httpStatus: 200 });
    expect((err as AiError).message).toContain('context length exceeded');

    llm.handle((_req, res) => {
      startStream(res);
      res.end('data: {"choices": [\n\n');
    });
    await expect(adapter.step(input({ onText: () => {} }))).rejects.toMatchObject({ reason: 'invalid_json' });

    llm.handle((_req, res) => {
      startStream(res);
      res.write(chunk({ content: 'x'.repeat(3_000) }));
      res.end('data: [DONE]\n\n');
    });
    await expect(make({ maxResponseBytes: 1_000 }).step(input({ onText: () => {} }))).rejects.toMatchObject({ reason: 'too_large' });
  });

  it('a stream that stalls is ended by the deadline; a cancelled one says aborted and keeps nothing', async () => {
    llm.handle((_req, res) => {
      startStream(res);
      res.write(chunk({ content: 'Hello there. And then' }));
    });
    const pieces: string[] = [];
    const timed = await make({ timeoutMs: 200 }).step(input({ onText: (p) => pieces.push(p) }));
    expect(timed).toMatchObject({ text: 'Hello there.', cut: 'timeout' });

    const controller = new AbortController();
    const cancelled = adapter.step(input({ signal: controller.signal, onText: () => controller.abort() }));
    await expect(cancelled).rejects.toMatchObject({ reason: 'aborted' });
  });

  it('a server that keeps the connection open after [DONE] is not waited for', async () => {
    llm.handle((_req, res) => {
      startStream(res);
      res.write(chunk({ content: 'We open at nine. ' }));
      res.write(chunk({ content: 'We close at five.' }));
      res.write('data: [DONE]\n\n'); // and never ends the response
    });
    const step = await make({ timeoutMs: 60_000 }).step(input({ onText: () => {} }));
    expect(step).toEqual({ kind: 'answer', source: 'ai', text: 'We open at nine. We close at five.', streamed: 'We open at nine. '.length });
  });

  it('a tool step cut off after its preamble is not an answer: the fallback answers', async () => {
    llm.handle(
      breakingAfter(
        chunk({ content: 'Let me look up your order. ' }),
        chunk({ content: 'One moment' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_c', type: 'function', function: { name: 'order_status', arguments: '{"ord' } }] }),
      ),
    );
    const pieces: string[] = [];
    const failures: AiError[] = [];
    const ai = withFallback(adapter, createEmbeddedAnswerer(), (err) => failures.push(err as AiError));
    const step = await ai.step(input({ tools: [orderStatus], onText: (p) => pieces.push(p) }));
    expect(pieces).toEqual(['Let me look up your order.']);
    expect(step).toMatchObject({ kind: 'answer', source: 'fallback' });
    expect(failures.map((f) => f.reason)).toEqual(['connection']);
  });

  it('parallel calls sent whole under one index (Ollama) stay separate; a repeated name is not doubled', async () => {
    llm.handle((_req, res) => {
      startStream(res);
      res.write(chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'order_status', arguments: '{"order":"1"}' } }] }));
      res.write(chunk({ tool_calls: [{ index: 0, id: 'call_2', type: 'function', function: { name: 'order_status', arguments: '{"order":"2"}' } }] }));
      res.write(chunk({ tool_calls: [{ index: 1, id: 'call_3', type: 'function', function: { name: 'order_status', arguments: '{"order":' } }] }));
      res.write(chunk({ tool_calls: [{ index: 1, function: { name: 'order_status', arguments: '"3"}' } }] }));
      res.end('data: [DONE]\n\n');
    });
    const step = await adapter.step(input({ tools: [orderStatus], onText: () => {} }));
    expect(step).toEqual({
      kind: 'tool_calls',
      calls: [
        { id: 'call_1', name: 'order_status', args: { order: '1' } },
        { id: 'call_2', name: 'order_status', args: { order: '2' } },
        { id: 'call_3', name: 'order_status', args: { order: '3' } },
      ],
    });
  });

  it('a CRLF cut between two TCP writes ends one line, not two (a multi-line event stays whole)', async () => {
    llm.handle(async (_req, res) => {
      startStream(res);
      res.write('data: {"choices":[{"index":0,"delta":\r');
      await new Promise((r) => setTimeout(r, 10));
      res.write('\ndata: {"content":"Hello there."}}]}\r\n\r\n');
      res.end('data: [DONE]\r\n\r\n');
    });
    await expect(adapter.step(input({ onText: () => {} }))).resolves.toMatchObject({ kind: 'answer', text: 'Hello there.' });
  });

  it('a 1 MB answer in small deltas is read whole; only its start is cut into sentences', async () => {
    const sentence = 'This is a sentence of the answer. ';
    llm.handle(async (_req, res) => {
      startStream(res);
      let batch = '';
      for (let i = 0; i < 30_000; i++) {
        batch += chunk({ content: sentence });
        if (batch.length > 60_000) {
          res.write(batch);
          batch = '';
          await new Promise((r) => setImmediate(r));
        }
      }
      res.end(`${batch}data: [DONE]\n\n`);
    });
    const pieces: string[] = [];
    const step = await make({ maxResponseBytes: 8 * 1024 * 1024 }).step(input({ onText: (p) => pieces.push(p) }));
    expect(step.kind === 'answer' && step.text.length).toBe(30_000 * sentence.length - 1);
    expect(pieces.length).toBeGreaterThan(100);
    expect(pieces.join(' ').length).toBeLessThanOrEqual(MAX_STREAMED_CHARS);
  });

  it('SSE details: CRLF line ends, comments, multi-line data and events split across TCP writes', async () => {
    llm.handle(async (_req, res) => {
      startStream(res);
      const body = ': keep-alive\r\n\r\n' + chunk({ content: 'First one. ' }).replace(/\n/g, '\r\n') + 'data: {"choices":[{"index":0,\ndata: "delta":{"content":"Second."}}]}\n\n' + 'data: [DONE]\n\n';
      for (let i = 0; i < body.length; i += 7) {
        res.write(body.slice(i, i + 7));
        await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
    const step = await adapter.step(input({ onText: () => {} }));
    expect(step).toMatchObject({ kind: 'answer', text: 'First one. Second.' });
  });
});
