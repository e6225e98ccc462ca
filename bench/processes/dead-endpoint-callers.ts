/**
 * The callers of the dead-endpoint benchmark, in a child process of their own (bench/dead-endpoint.bench.ts forks it):
 * ConversationRelay clients over real WebSockets, playing Twilio's side as bench/processes/phone-callers.ts does, in groups
 * (one phone number each). Every call speaks a final prompt every `intervalMs` from an evenly spread offset until told
 * to stop.
 *
 * Each prompt carries its own reference (`reference c<call>x<n>`), and an answer counts only when its text carries the
 * reference of the prompt it answers: the integrator echoes the message, the scripted LLM repeats the reference. So
 * every answer is matched to its prompt by id, not by order; an answer with another reference is a duplicate (that
 * prompt was answered already) or unmatched, and both are reported.
 *
 * A call never speaks over its own unanswered prompt (that would be a barge-in, which cancels the turn being
 * measured): a prompt due while the previous one is unanswered is sent as soon as the answer arrives, and its delay is
 * recorded (`lateMs`).
 *
 * IPC: → {type:'connected', connectErrors}; ← {type:'start'}; ← {type:'stop'}; → {type:'finished', …};
 * ← {type:'close'}; → {type:'closed', dropped}.
 */
import { once } from 'node:events';
import WebSocket from 'ws';
import { parentMessage } from '../lib/child-message.ts';

export interface DeadEndpointCallersConfig {
  url: string;
  token: string;
  groups: { name: string; number: string; calls: number }[];
  intervalMs: number;
  /** After `stop`, how long outstanding prompts may still be answered before they count as unanswered. */
  drainMs: number;
}

/** One prompt and what came back for it. Times since the epoch are `performance.timeOrigin + performance.now()`. */
export interface PromptRecord {
  ref: string;
  group: string;
  /** When it was due, and when it was sent (later when the previous answer was still outstanding), ms since the epoch. */
  dueAt: number;
  sentAt: number;
  /** From sending the prompt to the answer's last frame (last:true, the reference checked), ms; null: unanswered. */
  ms: number | null;
  /** From sending the prompt to the answer's first frame (a streamed answer's first sentence), ms. */
  firstMs: number | null;
  /** The answer as heard (the frames' tokens joined), cut to 200 characters. */
  text: string | null;
  fillers: number;
}

export interface DeadEndpointCallersResults {
  type: 'finished';
  prompts: PromptRecord[];
  /** Answers that carried the reference of a prompt of the same call that was answered already. */
  duplicates: { ref: string; text: string }[];
  /** Answers with no reference, or the reference of no prompt this call has outstanding or answered. */
  unmatched: { call: string; text: string }[];
  cpuMicros: number;
}

export type DeadEndpointCallersMessage = { type: 'connected'; connectErrors: number } | DeadEndpointCallersResults | { type: 'closed'; dropped: number };

const REF = /reference (c\d+x\d+)/i;
const QUESTIONS = ['When are you open on Sunday?', 'How long does shipping to Belgium take?', 'Can I return a gift without a receipt?', 'Which payment methods do you accept?'];

export function callSid(index: number): string {
  return `CA${String(index).padStart(32, '0')}`;
}

const epochNow = (): number => performance.timeOrigin + performance.now();

class Caller {
  ws!: WebSocket;
  dropped = false;
  #stopping = false;
  #n = 0;
  #outstanding: PromptRecord | null = null;
  #answered: ((value: void) => void) | null = null;
  #pieces: string[] = [];
  readonly #byRef = new Map<string, PromptRecord>();
  readonly #index: number;
  readonly #group: { name: string; number: string };
  readonly #config: DeadEndpointCallersConfig;
  readonly #results: DeadEndpointCallersResults;

  constructor(index: number, group: { name: string; number: string }, config: DeadEndpointCallersConfig, results: DeadEndpointCallersResults) {
    this.#index = index;
    this.#group = group;
    this.#config = config;
    this.#results = results;
  }

  get waiting(): boolean {
    return this.#outstanding !== null;
  }

  async connect(): Promise<void> {
    const { url, token } = this.#config;
    this.ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    this.ws.on('message', (data) => this.#onFrame(JSON.parse(String(data)) as { type: string; token?: string; last?: boolean; preemptible?: boolean }));
    this.ws.on('close', () => {
      if (!this.#stopping) this.dropped = true;
    });
    await once(this.ws, 'open');
    const sid = callSid(this.#index);
    this.ws.send(JSON.stringify({ type: 'setup', sessionId: `VX${sid.slice(2)}`, callSid: sid, from: `+316${String(10_000_000 + this.#index)}`, to: this.#group.number, customParameters: {} }));
  }

  /** Speaks the prompt due at `dueAt`, after the previous one's answer if that is still outstanding. */
  async prompt(dueAt: number): Promise<void> {
    if (this.#outstanding) await new Promise<void>((resolve) => (this.#answered = resolve));
    if (this.ws.readyState !== WebSocket.OPEN || this.#stopping) return;
    const ref = `c${this.#index}x${++this.#n}`;
    const question = QUESTIONS[(this.#index + this.#n) % QUESTIONS.length]!;
    const record: PromptRecord = { ref, group: this.#group.name, dueAt, sentAt: epochNow(), ms: null, firstMs: null, text: null, fillers: 0 };
    this.#outstanding = record;
    this.#byRef.set(ref, record);
    this.#results.prompts.push(record);
    this.#pieces = [];
    this.ws.send(JSON.stringify({ type: 'prompt', voicePrompt: `${question} Reference ${ref}.`, lang: 'en-US', last: true }));
  }

  #onFrame(frame: { type: string; token?: string; last?: boolean; preemptible?: boolean }): void {
    if (frame.type !== 'text') return;
    const current = this.#outstanding;
    if (frame.preemptible) {
      if (current) current.fillers++;
      return;
    }
    if (current && current.firstMs === null && this.#pieces.length === 0) current.firstMs = epochNow() - current.sentAt;
    this.#pieces.push(frame.token ?? '');
    if (frame.last === false) return;
    const text = this.#pieces.join('').trim();
    this.#pieces = [];
    const ref = REF.exec(text)?.[1];
    const record = ref === undefined ? undefined : this.#byRef.get(ref);
    if (record !== undefined && record === current) {
      record.ms = epochNow() - record.sentAt;
      record.text = text.slice(0, 200);
      this.#outstanding = null;
      this.#answered?.();
      this.#answered = null;
    } else if (record !== undefined) {
      this.#results.duplicates.push({ ref: record.ref, text: text.slice(0, 200) });
    } else {
      this.#results.unmatched.push({ call: `c${this.#index}`, text: text.slice(0, 200) });
    }
  }

  stop(): void {
    this.#stopping = true;
    // A prompt held behind an unanswered one is not sent any more.
    this.#answered?.();
  }

  close(): void {
    this.#stopping = true;
    this.ws.close();
  }
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env.DEAD_ENDPOINT_CALLERS_CONFIG ?? '{}') as DeadEndpointCallersConfig;
  const results: DeadEndpointCallersResults = { type: 'finished', prompts: [], duplicates: [], unmatched: [], cpuMicros: 0 };
  const callers: Caller[] = [];
  /** Each call's first prompt, as a share of the interval: every group spread evenly over it, the groups interleaved. */
  const offsets: number[] = [];
  config.groups.forEach((group, g) => {
    for (let i = 0; i < group.calls; i++) {
      offsets.push((i + g / config.groups.length) / group.calls);
      callers.push(new Caller(callers.length, group, config, results));
    }
  });
  const send = (message: DeadEndpointCallersMessage) => process.send!(message);
  process.on('disconnect', () => process.exit(0));

  const settled = await Promise.allSettled(callers.map((c) => c.connect()));
  send({ type: 'connected', connectErrors: settled.filter((r) => r.status === 'rejected').length });
  await parentMessage('start');

  const cpuStart = process.cpuUsage();
  let stopped = false;
  const stopping = parentMessage('stop').then(() => (stopped = true));
  const started = epochNow();
  const loops = callers.map(async (c, i) => {
    let due = started + offsets[i]! * config.intervalMs;
    while (!stopped) {
      const wait = due - epochNow();
      if (wait > 0) await Promise.race([new Promise((r) => setTimeout(r, wait)), stopping]);
      if (stopped) break;
      await c.prompt(due);
      due += config.intervalMs;
    }
  });
  await stopping;
  for (const c of callers) c.stop();
  await Promise.all(loops);
  const deadline = epochNow() + config.drainMs;
  while (callers.some((c) => c.waiting) && epochNow() < deadline) await new Promise((r) => setTimeout(r, 20));
  const cpu = process.cpuUsage(cpuStart);
  results.cpuMicros = cpu.user + cpu.system;
  send(results);

  await parentMessage('close');
  const dropped = callers.filter((c) => c.dropped).length;
  for (const c of callers) if (c.ws) c.close();
  await new Promise((r) => setTimeout(r, 300));
  send({ type: 'closed', dropped });
}

if (process.send) {
  main().catch((err: unknown) => {
    process.stderr.write(`dead-endpoint callers failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
