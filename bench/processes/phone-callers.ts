/**
 * The callers of the phone-calls benchmark, in a child process of their own (bench/phone-calls.bench.ts forks it):
 * PHONE_CALLERS_CONFIG's `calls` ConversationRelay clients playing Twilio's side, each sending a final prompt every
 * `intervalMs` from an evenly spread offset. Kept out of the service's process like the integrator, so the service's
 * event loop and heap are the service's alone and the load generator's own work is not measured as the service's.
 *
 * IPC: → {type:'connected', connectErrors}; ← {type:'start'}; → {type:'finished', …results}; ← {type:'close'};
 * → {type:'closed', dropped}. A prompt is identified as `<call index>:<n>`: the n-th prompt of that call (from 1);
 * with `matchIds` the id travels in the prompt's text and back in the answer (the integrator echoes it).
 */
import { once } from 'node:events';
import WebSocket from 'ws';
import { parentMessage } from '../lib/child-message.ts';

export interface CallersConfig {
  /** The phone WebSocket endpoint; with `urls`, call i connects to `urls[i % urls.length]` (one engine per call). */
  url: string;
  urls?: string[];
  token: string;
  number: string;
  calls: number;
  intervalMs: number;
  warmupSeconds: number;
  seconds: number;
  /**
   * Put a reference (`ref p<call>x<n>`) in each prompt and take an answer only as the answer of the prompt whose
   * reference it carries (the integrator echoes it): a late answer still counts for its own prompt, a second answer
   * to one prompt is a duplicate, an answer with no known reference is mismatched. Without it (an integrator with one
   * fixed answer) an answer is matched to the outstanding prompt by order.
   */
  matchIds?: boolean;
}

export interface CallersResults {
  type: 'finished';
  /** Recorded (after the warm-up) answered prompts: their ids and prompt-to-answer times, ms. */
  ids: string[];
  totalsMs: number[];
  prompts: number;
  answered: number;
  /** Recorded prompts never answered (with `matchIds`: by the end; without: before the next prompt). */
  unanswered: number;
  /** With `matchIds`: the first unanswered prompts' ids (at most 20), for the report. */
  unansweredIds: string[];
  fillers: number;
  /** With `matchIds`: answers that carried another prompt's reference (or none); never counted as answered. */
  mismatched: number;
  /** With `matchIds`: second answers to a prompt already answered. */
  duplicates: number;
  /**
   * Calls the service turned away at the door (an `end` frame, reason `busy`: the embedded engine's admission control,
   * docs/operations.md). Their callers stop speaking; not counted as dropped, their prompts not as unanswered.
   */
  refused: number;
  /**
   * With `matchIds`: prompts outstanding on a call whose socket closed under it (its engine was killed: the soak),
   * counted here and not as unanswered, since a live call does not outlive its process.
   */
  cut: number;
  /** Each call's engine, when the server names it in the upgrade's `x-botlink-engine` header (the soak's HAProxy). */
  engineOfCall: Record<number, string>;
  cpuMicros: number;
}

export type CallersMessage = { type: 'connected'; connectErrors: number } | CallersResults | { type: 'closed'; dropped: number };

export function callSid(index: number): string {
  return `CA${String(index).padStart(32, '0')}`;
}

const REF = /ref p(\d+)x(\d+)\)/;

class Caller {
  ws!: WebSocket;
  dropped = false;
  refused = false;
  #sentAt = 0;
  #waiting = false;
  #n = 0;
  #stopping = false;
  #recording = false;
  /** With `matchIds`: the prompts sent and not yet answered (n → sent at, recorded) and those answered. */
  readonly #outstanding = new Map<number, { sentAt: number; record: boolean }>();
  readonly #answered = new Set<number>();
  readonly #index: number;
  readonly #config: CallersConfig;
  readonly #results: CallersResults;

  constructor(index: number, config: CallersConfig, results: CallersResults) {
    this.#index = index;
    this.#config = config;
    this.#results = results;
  }

  get waiting(): boolean {
    return this.#config.matchIds ? this.#outstanding.size > 0 : this.#waiting;
  }

  async connect(): Promise<void> {
    const { url, urls, token, number } = this.#config;
    const target = urls && urls.length > 0 ? urls[this.#index % urls.length]! : url;
    this.ws = new WebSocket(target, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
    this.ws.on('upgrade', (res) => {
      const engine = res.headers['x-botlink-engine'];
      if (typeof engine === 'string') this.#results.engineOfCall[this.#index] = engine;
    });
    this.ws.on('message', (data) => this.#onFrame(JSON.parse(String(data)) as { type: string; preemptible?: boolean; token?: string; handoffData?: string }));
    this.ws.on('close', () => {
      if (!this.#stopping && !this.refused) this.dropped = true;
    });
    await once(this.ws, 'open');
    const sid = callSid(this.#index);
    this.ws.send(JSON.stringify({ type: 'setup', sessionId: `VX${sid.slice(2)}`, callSid: sid, from: '+31612345678', to: number, customParameters: {} }));
  }

  /** Speaks now. Without `matchIds`, an answer still outstanding from the previous prompt counts as unanswered. */
  prompt(record: boolean): void {
    if (this.refused || this.ws.readyState !== WebSocket.OPEN) return;
    this.#n++;
    if (record) this.#results.prompts++;
    const sentAt = performance.now();
    if (this.#config.matchIds) {
      this.#outstanding.set(this.#n, { sentAt, record });
      this.ws.send(JSON.stringify({ type: 'prompt', voicePrompt: `Where is my order 1234? (${this.#ref()})`, lang: 'en-US', last: true }));
      return;
    }
    if (this.#waiting && this.#recording) this.#results.unanswered++;
    this.#waiting = true;
    this.#recording = record;
    this.#sentAt = sentAt;
    this.ws.send(JSON.stringify({ type: 'prompt', voicePrompt: 'Where is my order 1234?', lang: 'en-US', last: true }));
  }

  #ref(): string {
    return `ref p${this.#index}x${this.#n}`;
  }

  #onFrame(frame: { type: string; preemptible?: boolean; token?: string; handoffData?: string }): void {
    if (frame.type === 'end' && (JSON.parse(frame.handoffData ?? '{}') as { reason?: string }).reason === 'busy') {
      this.refused = true;
      this.#results.refused++;
      // Prompts sent before the refusal arrived are not the service's to answer any more.
      for (const prompt of this.#outstanding.values()) if (prompt.record) this.#results.prompts--;
      if (this.#waiting && this.#recording) this.#results.prompts--;
      this.#outstanding.clear();
      this.#waiting = false;
      return;
    }
    if (frame.type !== 'text') return;
    // Nothing asked yet (the busy sentence before the refusal's `end`, a greeting): not an answer to any prompt.
    if (this.refused || this.#n === 0) return;
    if (frame.preemptible) {
      this.#results.fillers++;
      return;
    }
    if (this.#config.matchIds) {
      const ref = REF.exec(frame.token ?? '');
      const n = ref && Number(ref[1]) === this.#index ? Number(ref[2]) : 0;
      const prompt = this.#outstanding.get(n);
      if (prompt) {
        this.#outstanding.delete(n);
        this.#answered.add(n);
        if (prompt.record) this.#answer(n, prompt.sentAt);
      } else if (this.#answered.has(n)) {
        this.#results.duplicates++;
      } else {
        this.#results.mismatched++;
      }
      return;
    }
    if (!this.#waiting) return;
    this.#waiting = false;
    if (this.#recording) this.#answer(this.#n, this.#sentAt);
  }

  #answer(n: number, sentAt: number): void {
    this.#results.answered++;
    this.#results.ids.push(`${this.#index}:${n}`);
    this.#results.totalsMs.push(performance.now() - sentAt);
  }

  /** At the end: the recorded prompts still outstanding are unanswered. */
  finish(): void {
    if (this.#config.matchIds) {
      for (const [n, prompt] of this.#outstanding) {
        if (!prompt.record) continue;
        if (this.dropped) {
          this.#results.cut++;
          continue;
        }
        this.#results.unanswered++;
        if (this.#results.unansweredIds.length < 20) this.#results.unansweredIds.push(`${this.#index}:${n}`);
      }
    } else if (this.#waiting && this.#recording) {
      this.#results.unanswered++;
    }
  }

  close(): void {
    this.#stopping = true;
    this.ws.close();
  }
}

/** The fractional part of the golden ratio: the offsets it gives stay evenly spread for every prefix of the calls. */
const GOLDEN_RATIO_FRACTION = (Math.sqrt(5) - 1) / 2;

async function main(): Promise<void> {
  const config = JSON.parse(process.env.PHONE_CALLERS_CONFIG ?? '{}') as CallersConfig;
  const results: CallersResults = { type: 'finished', ids: [], totalsMs: [], prompts: 0, answered: 0, unanswered: 0, unansweredIds: [], fillers: 0, mismatched: 0, duplicates: 0, refused: 0, cut: 0, engineOfCall: {}, cpuMicros: 0 };
  const callers = Array.from({ length: config.calls }, (_, i) => new Caller(i, config, results));
  const send = (message: CallersMessage) => process.send!(message);
  process.on('disconnect', () => process.exit(0));

  // Connect every call, 50 at a time (Twilio's calls arrive over time too).
  let connectErrors = 0;
  for (let i = 0; i < callers.length; i += 50) {
    const settled = await Promise.allSettled(callers.slice(i, i + 50).map((c) => c.connect()));
    connectErrors += settled.filter((r) => r.status === 'rejected').length;
  }
  send({ type: 'connected', connectErrors });
  await parentMessage('start');

  const started = performance.now();
  // CPU over the measured part only, like the parent's.
  let cpuStart = process.cpuUsage();
  setTimeout(() => (cpuStart = process.cpuUsage()), config.warmupSeconds * 1000);
  const endAt = started + (config.warmupSeconds + config.seconds) * 1000;
  const recordFrom = started + config.warmupSeconds * 1000;
  await Promise.all(
    callers.map(async (caller, i) => {
      // Each call's place in the interval: i × the golden ratio, mod 1. Any first k calls are spread evenly over the
      // interval, not only all of them: when an engine admits only the first calls (the embedded engine's bound), their
      // prompts must not all fall in the first part of every interval (i / calls did that: 800 admitted of 2,000 calls
      // spoke in bursts at 2.5 times their mean rate).
      await new Promise((r) => setTimeout(r, ((i * GOLDEN_RATIO_FRACTION) % 1) * config.intervalMs));
      for (let due = performance.now(); due < endAt; due += config.intervalMs) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        caller.prompt(performance.now() >= recordFrom);
      }
    }),
  );
  // The last answers.
  const lastDeadline = performance.now() + config.intervalMs;
  while (callers.some((c) => c.waiting) && performance.now() < lastDeadline) await new Promise((r) => setTimeout(r, 20));
  for (const c of callers) c.finish();
  const cpu = process.cpuUsage(cpuStart);
  results.cpuMicros = cpu.user + cpu.system;
  send(results);

  await parentMessage('close');
  const dropped = callers.filter((c) => c.dropped).length;
  for (const c of callers) if (c.ws && !c.refused) c.close();
  await new Promise((r) => setTimeout(r, 500));
  send({ type: 'closed', dropped });
}

if (process.send) {
  main().catch((err: unknown) => {
    process.stderr.write(`phone callers failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
