/**
 * Streamed replies on the phone, end to end: a real `ws` client plays ConversationRelay, and the AI is a real
 * OpenAI-compatible server on loopback HTTPS that streams its answer as server-sent events. The server holds back the
 * rest of an answer until the caller has heard its first sentence, so each test proves the sentence went out while the
 * model was still writing.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDatabase } from '../../helpers/db.ts';
import { startHttpsServer, type TestHttpsServer } from '../../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller, type Frame } from '../../helpers/phone-caller.ts';
import { seedWorkspace, startTestService, type TestService } from '../../helpers/service.ts';

// Well above the time a scripted first sentence takes to be spoken, even on a loaded CI machine.
const FILLER_MS = 1_000;
/** A frame of the answer: text that is not the filler (tests not about the filler pass over one, should it come). */
const spoken = (f: Frame) => f.type === 'text' && !f.preemptible;

interface ChatRequest {
  stream?: boolean;
  messages: { role: string; content: string | null }[];
}

/** One streamed completion: `write` sends content fragments; `end` finishes the stream; `destroy` breaks it. */
interface Completion {
  request: ChatRequest;
  write(content: string): void;
  end(): void;
  destroy(): void;
}

function chunk(content: string): string {
  return `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`;
}

/** Reads a Server-Sent Events response as it comes. */
function readEvents(res: Response) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const events: { event: string; data: any }[] = [];
  const reader = res.body!.getReader();
  let buffer = '';
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += new TextDecoder().decode(value);
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) events.push({ event, data: JSON.parse(data) });
        end = buffer.indexOf('\n\n');
      }
    }
  })();
  return {
    async until(ok: (e: typeof events) => boolean) {
      const deadline = Date.now() + 5_000;
      while (!ok(events) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return events;
    },
    async stop() {
      await reader.cancel();
      await pump;
    },
  };
}

describeEachDatabase('phone replies streamed sentence by sentence', (get) => {
  let service: TestService;
  let llm: TestHttpsServer;
  let owner: string;
  const callers: Caller[] = [];
  const completions: Completion[] = [];
  let completionArrived: (() => void) | null = null;
  let seq = 0;

  /** The next completion request the service sends to the LLM. */
  async function nextCompletion(): Promise<Completion> {
    const deadline = Date.now() + 5_000;
    while (completions.length === 0) {
      if (Date.now() > deadline) throw new Error('no completion request');
      await new Promise<void>((resolve) => {
        completionArrived = resolve;
        setTimeout(resolve, 100);
      });
    }
    return completions.shift()!;
  }

  async function call(): Promise<{ caller: Caller; sid: string }> {
    const caller = await Caller.connect(service);
    callers.push(caller);
    const sid = `CA-stream-${Date.now()}-${seq++}`;
    caller.setup(sid);
    return { caller, sid };
  }

  /** A call whose question's answer has begun: `written` is sent by the LLM, and its first sentence has been heard. */
  async function answering(question: string, written: string) {
    const { caller, sid } = await call();
    caller.say(question);
    const completion = await nextCompletion();
    completion.write(written);
    const first = await caller.next((f) => f.type === 'text' && f.last === false);
    return { caller, sid, completion, first };
  }

  /** The conversation as the LLM was given it: user and assistant messages. */
  const dialogue = (c: Completion) => c.request.messages.filter((m) => m.role === 'user' || m.role === 'assistant').map((m) => [m.role, m.content]);

  const turns = (sid: string) =>
    get()
      .db.selectFrom('session_turns')
      .innerJoin('sessions', 'sessions.id', 'session_turns.session_id')
      .select(['session_turns.status', 'session_turns.reply', 'session_turns.source', 'session_turns.errors'])
      .where('sessions.external_id', '=', sid)
      .orderBy('session_turns.ordinal')
      .execute();

  async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const value = await read();
      if (ok(value) || Date.now() > deadline) return value;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  beforeAll(async () => {
    llm = await startHttpsServer((_req, res: ServerResponse, body) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      completions.push({
        request: JSON.parse(body.toString()) as ChatRequest,
        write: (content) => res.write(chunk(content)),
        end: () => res.end('data: [DONE]\n\n'),
        destroy: () => res.socket?.destroy(),
      });
      completionArrived?.();
    });
    service = await startTestService(get(), { BRIDGE_TOKEN, LLM_BASE_URL: `${llm.origin}/v1`, LLM_MODEL: 'test-model' }, { phone: { fillerMs: FILLER_MS } });
    const ws = await seedWorkspace(service);
    owner = ws.owner;
    // No bot link: every question goes to the AI.
    expect((await service.api('PUT', '/v1/phone', { token: owner, body: { numbers: ['+31 20 123 4567'] } })).status).toBe(200);
  });
  afterEach(() => {
    for (const c of callers.splice(0)) c.ws.terminate();
    for (const c of completions.splice(0)) c.destroy();
  });
  afterAll(async () => {
    await service.stop();
    await llm.close();
  });

  describe('a streamed answer', () => {
    it('goes out sentence by sentence (last:false) while the model writes, and the rest closes the talk cycle', async () => {
      const { caller, sid } = await call();
      // The dashboard's live stream of this session, open before the question.
      const row = await until(() => get().db.selectFrom('sessions').select('id').where('external_id', '=', sid).executeTakeFirst(), (r) => r !== undefined);
      const live = await fetch(`${service.url}/v1/sessions/${row!.id}/events`, { headers: { authorization: `Bearer ${owner}` } });
      const events = readEvents(live);
      caller.say('When are you open?');
      const completion = await nextCompletion();
      expect(completion.request.stream).toBe(true);
      completion.write('We are open **until 17:00** on weekdays. On ');
      // Heard before the model has written another word.
      expect(await caller.next(spoken)).toEqual({ type: 'text', token: 'We are open until 17:00 on weekdays. ', last: false, lang: 'en-US' });
      completion.write('Saturday we close at 12:00.');
      completion.end();
      expect(await caller.next(spoken)).toEqual({ type: 'text', token: 'On Saturday we close at 12:00.', last: true, lang: 'en-US' });
      const [turn] = await until(() => turns(sid), (t) => t.length === 1);
      expect(turn).toMatchObject({ status: 'completed', source: 'ai', reply: 'We are open **until 17:00** on weekdays. On Saturday we close at 12:00.' });
      const seen = await events.until((e) => e.some((x) => x.event === 'reply'));
      expect(seen.filter((x) => x.event === 'reply_piece' || x.event === 'reply').map((x) => [x.event, x.data.text])).toEqual([
        ['reply_piece', 'We are open until 17:00 on weekdays.'],
        ['reply', 'We are open until 17:00 on weekdays. On Saturday we close at 12:00.'],
      ]);
      await events.stop();
    });

    it('a first sentence before the filler time means no filler, however long the rest takes', async () => {
      const { caller, completion } = await answering('Tell me about returns', 'Returns are free within 30 days. You ');
      await new Promise((r) => setTimeout(r, FILLER_MS * 2));
      completion.write('can send them back by post.');
      completion.end();
      const rest = await caller.next((f) => f.type === 'text');
      expect(rest).toMatchObject({ token: 'You can send them back by post.', last: true });
      expect(rest.preemptible).toBeUndefined();
    });

    it('an answer that arrives all at once is one frame, last:true, as without streaming', async () => {
      const { caller } = await call();
      caller.say('Do you ship abroad?');
      const completion = await nextCompletion();
      completion.write('Yes, we ship to all of Europe.');
      completion.end();
      expect(await caller.next(spoken)).toEqual({ type: 'text', token: 'Yes, we ship to all of Europe.', last: true, lang: 'en-US' });
    });
  });

  describe('conversation memory', () => {
    it('"And the other one?" reaches the model together with the previous exchange of the call', async () => {
      const { caller } = await call();
      caller.say('How much is the red bike?');
      const first = await nextCompletion();
      expect(dialogue(first)).toEqual([['user', 'How much is the red bike?']]);
      first.write('The red bike costs 499 euro.');
      first.end();
      expect(await caller.next(spoken)).toMatchObject({ token: 'The red bike costs 499 euro.', last: true });
      caller.say('And the other one?');
      const second = await nextCompletion();
      expect(dialogue(second)).toEqual([
        ['user', 'How much is the red bike?'],
        ['assistant', 'The red bike costs 499 euro.'],
        ['user', 'And the other one?'],
      ]);
      second.write('The blue bike costs 549 euro.');
      second.end();
      expect(await caller.next(spoken)).toMatchObject({ token: 'The blue bike costs 549 euro.', last: true });
    });
  });

  describe('when the caller speaks over a streamed answer', () => {
    it('the rest is never sent, and the history keeps this turn with what was heard of it', async () => {
      const { caller, sid, completion: first } = await answering('What does shipping cost?', 'Shipping costs 5 euro in the Netherlands. Abroad ');
      caller.send({ type: 'interrupt', utteranceUntilInterrupt: 'Shipping costs 5 euro', durationUntilInterruptMs: 900 });
      // Wait until the service has cancelled the turn (it is written as cancelled).
      await until(() => turns(sid), (t) => t.length === 1);
      first.write('it is 12 euro.');
      first.end();
      caller.say('And to Belgium?');
      const second = await nextCompletion();
      expect(dialogue(second)).toEqual([
        ['user', 'What does shipping cost?'],
        ['assistant', 'Shipping costs 5 euro'],
        ['user', 'And to Belgium?'],
      ]);
      second.write('Belgium is 7 euro.');
      second.end();
      expect(await caller.next(spoken)).toEqual({ type: 'text', token: 'Belgium is 7 euro.', last: true, lang: 'en-US' });
      // Nothing of the interrupted answer was sent after the interrupt.
      expect(caller.frames.filter((f: Frame) => f.type === 'text')).toEqual([]);
      const written = await until(() => turns(sid), (t) => t.length === 2);
      expect(written.map((t) => t.status)).toEqual(['cancelled', 'completed']);
    });
  });

  describe('when the caller asks again while a streamed answer is going out (no interrupt frame)', () => {
    it('the talk cycle is closed, and the history keeps the first turn with what was sent of it', async () => {
      const { caller } = await answering('What are your opening hours?', 'We open at nine on weekdays. On ');
      caller.say('And on Sunday?');
      expect(await caller.next(spoken)).toEqual({ type: 'text', token: '', last: true, lang: 'en-US' });
      const second = await nextCompletion();
      expect(dialogue(second)).toEqual([
        ['user', 'What are your opening hours?'],
        ['assistant', 'We open at nine on weekdays.'],
        ['user', 'And on Sunday?'],
      ]);
      second.write('We are closed on Sunday.');
      second.end();
      expect(await caller.next(spoken)).toMatchObject({ token: 'We are closed on Sunday.', last: true });
    });
  });

  describe('when the stream breaks off', () => {
    it('after a spoken sentence: that sentence is the answer, the talk cycle is closed, and the turn says why', async () => {
      const { caller, sid, completion } = await answering('Where is my parcel?', 'Your parcel left our warehouse today. It should ');
      completion.destroy();
      expect(await caller.next(spoken)).toEqual({ type: 'text', token: '', last: true, lang: 'en-US' });
      const [turn] = await until(() => turns(sid), (t) => t.length === 1);
      expect(turn).toMatchObject({ status: 'completed', source: 'ai', reply: 'Your parcel left our warehouse today.' });
      expect(turn!.errors).toEqual([expect.stringContaining('the stream broke off (connection)')]);
    });

    it('before any sentence: the embedded answerer answers in full, once', async () => {
      const { caller } = await call();
      caller.say('Can I pay by invoice?');
      const completion = await nextCompletion();
      completion.write('Yes you');
      completion.destroy();
      const answer = await caller.next(spoken);
      expect(answer).toMatchObject({ last: true, token: expect.stringContaining('connect you with the team') });
    });
  });
});
