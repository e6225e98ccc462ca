/**
 * One spoken turn of a phone call, from the caller's words to the reply's end (docs/architecture.md, "The phone
 * turn"): the one owner of what went out to the caller and what the caller heard, as a voice agent keeps one handle
 * per reply. It holds the turn's id, the filler, the pieces of a streamed answer (docs/phone.md, Streamed replies)
 * and how much of the spoken length they used, what was heard when the caller spoke over it, and how it ended.
 *
 * Two sides use it. The channel makes it for a turn, gives it the voice it speaks through, starts the filler and
 * speaks the end (`finish`); a turn the caller moved on from is `cancel`led and says nothing more. The session
 * runtime speaks the AI's pieces through it as the AI writes them (`speak`), records the AI's steps (`record`), says
 * what is still to be said when the reply is ready (`rest`), and asks it what was heard on an interrupt (`heard`).
 */
import type { HandoffResult } from '../../machines/session-types.ts';
import { MAX_SPOKEN_CHARS } from '../ai/limits.ts';
import { phrase } from '../ai/phrases.ts';
import type { AiStep } from '../ai/types.ts';
import type { ReplyRenderer } from './reply-renderer.ts';

/** Less room than this left of the spoken length, and a piece or rest that does not fit is not cut to it. */
const MIN_SPOKEN_REST_CHARS = 40;

/** What the turn speaks through: the channel's frames. */
export interface TurnVoice {
  /** Sends text to the caller: a piece of a talk cycle (`last: false`), its end, or the filler (`preemptible`). */
  say(text: string, options: { last: boolean; preemptible?: boolean }): void;
  /** The caller got the turn's first text (the filler or the answer) this long after the turn began, ms. */
  firstText?(ms: number): void;
}

/** How the turn's reply went out, for the channel's log and metrics. */
export interface SpokenEnd {
  replyMs: number;
  firstTextMs: number;
  fillerAtMs: number | null;
  streamed: boolean;
}

/** What an interrupt tells the session: what was heard, and whether it belongs to the running turn (`midTurn`). */
export interface Heard {
  spoken?: string;
  midTurn?: true;
}

export class SpokenTurn {
  readonly id: string;
  /** The caller pressed 0: a handoff the turn ends with was asked for by key (otherwise by the caller's words). */
  readonly keyed: boolean;
  readonly #voice: TurnVoice;
  readonly #clock: () => number;
  readonly #startedAt: number;
  /** live: may still speak; cancelled: the caller moved on (or the call closed); ended: the reply was spoken. */
  #state: 'live' | 'cancelled' | 'ended' = 'live';
  #fillerTimer: NodeJS.Timeout | null = null;
  #fillerAtMs: number | null = null;
  #firstTextMs: number | null = null;
  /** Pieces of the answer reached the caller (last:false); the reply then ends with the rest, last:true. */
  #streamed = false;
  /** The rendered pieces of the answer given out, and their length with a space between them. */
  readonly #sent: string[] = [];
  #sentChars = 0;
  /** What earlier AI steps of this turn said before they called tools. */
  readonly #said: string[] = [];
  /** How the answer the machine records begins: the part of it already spoken (raw, before rendering). */
  #spokenAnswer = '';
  /** The spoken length is used up: nothing more of the answer is said. */
  #full = false;

  constructor(options: { id: string; voice: TurnVoice; keyed?: boolean; clock?: () => number }) {
    this.id = options.id;
    this.keyed = options.keyed ?? false;
    this.#voice = options.voice;
    this.#clock = options.clock ?? (() => performance.now());
    this.#startedAt = this.#clock();
  }

  /** The rendered pieces of the answer that went out. */
  get sent(): readonly string[] {
    return this.#sent;
  }

  /** Whether the turn may still speak (not cancelled, not ended). */
  get live(): boolean {
    return this.#state === 'live';
  }

  /** After `ms` without any text, `text` once, preemptible: the answer, when ready, cuts it off. */
  startFiller(ms: number, text: () => string, onFiller?: (atMs: number) => void): void {
    this.#fillerTimer = setTimeout(() => {
      this.#fillerTimer = null;
      if (!this.live) return;
      this.#fillerAtMs = this.#elapsed();
      this.#firstText(this.#fillerAtMs);
      onFiller?.(this.#fillerAtMs);
      this.#voice.say(text(), { last: true, preemptible: true });
    }, ms);
  }

  /** The caller moved on (a newer turn, their words merged, an interrupt, the call closed): nothing more is said. */
  cancel(): void {
    this.stopFiller();
    if (this.#state === 'live') this.#state = 'cancelled';
  }

  /**
   * The session side: a piece of the AI's answer as it should be said, counted as given out; null when nothing of it
   * is to be said (the spoken length is used up). `deliver` then sends it.
   */
  fit(piece: string, language: string, render: ReplyRenderer): string | null {
    if (this.#full) return null;
    const text = this.#fitted(piece, language, render);
    if (text === '') return null;
    this.#sent.push(text);
    this.#sentChars += text.length + 1;
    return text;
  }

  /** A fitted piece to the caller at once (last:false), unless the caller has moved on. */
  deliver(text: string): void {
    if (!this.live) return;
    this.stopFiller();
    this.#firstText(this.#elapsed());
    this.#streamed = true;
    // The bridge joins the tokens of a talk cycle as they come: the space between sentences is ours to send.
    this.#voice.say(`${text} `, { last: false });
  }

  /**
   * The AI step as the machine should record it: what earlier steps said before calling tools begins the answer; how
   * much of the answer was spoken is remembered, so only the rest goes out at the end.
   */
  record(step: AiStep): AiStep {
    if (step.kind === 'tool_calls') {
      if (step.said) this.#said.push(step.said);
      return step;
    }
    const before = this.#said.join(' ');
    const spoken = step.streamed ? step.text.slice(0, step.streamed) : '';
    this.#spokenAnswer = [before, spoken].filter((t) => t !== '').join(' ');
    return before === '' ? step : { ...step, text: `${before} ${step.text}` };
  }

  /** What is still to be said at the turn's end: the rest of the answer (in the room left) and the handoff sentence. */
  rest(reply: { answer: string; language: string; handoff: HandoffResult | null }, render: ReplyRenderer): string {
    const { answer, language, handoff } = reply;
    let rest = '';
    if (answer.trim() === '') rest = phrase('dont_know', language);
    else if (!this.#full) rest = answer.startsWith(this.#spokenAnswer) ? answer.slice(this.#spokenAnswer.length).trim() : answer;
    const parts = [rest === '' ? '' : this.#fitted(rest, language, render), handoff?.sentence ? render({ text: handoff.sentence, source: null, language }) : ''];
    return parts.filter((t) => t !== '').join(' ');
  }

  /**
   * The caller spoke over the reply (`spoken`: what the bridge says was heard, when it says). When pieces of this
   * turn went out, what was heard belongs to it (without the bridge's word: what was sent); otherwise to the last reply.
   */
  heard(spoken?: string): Heard {
    const midTurn = this.#sent.length > 0;
    const text = spoken ?? (midTurn ? this.#sent.join(' ') : undefined);
    return { ...(text === undefined ? {} : { spoken: text }), ...(midTurn ? { midTurn } : {}) };
  }

  /**
   * The channel side: the reply is ready. Speaks the end of the talk cycle (after streamed pieces the rest, maybe
   * empty; otherwise the whole reply) and answers how it went; null when the turn may no longer speak.
   */
  finish(reply: { text: string; unsent: string }): SpokenEnd | null {
    this.stopFiller();
    if (!this.live) return null;
    this.#state = 'ended';
    const replyMs = this.#elapsed();
    this.#firstText(replyMs);
    this.#voice.say(this.#streamed ? reply.unsent : reply.text, { last: true });
    return { replyMs, firstTextMs: this.#firstTextMs ?? replyMs, fillerAtMs: this.#fillerAtMs, streamed: this.#streamed };
  }

  /** The channel side: the turn failed; `text` (the honest fallback) ends it, unless it may no longer speak. */
  fail(text: string): boolean {
    this.stopFiller();
    if (!this.live) return false;
    this.#state = 'ended';
    // No dead air even when the engine fails (and a streamed talk cycle is closed by it).
    this.#voice.say(text, { last: true });
    return true;
  }

  /** A streamed talk cycle left open: the bridge sent no interrupt while the caller spoke, so we close it. */
  closeTalkCycle(): boolean {
    if (!this.#streamed) return false;
    this.#voice.say('', { last: true });
    return true;
  }

  #elapsed(): number {
    return this.#clock() - this.#startedAt;
  }

  #firstText(ms: number): void {
    if (this.#firstTextMs !== null) return;
    this.#firstTextMs = ms;
    this.#voice.firstText?.(ms);
  }

  /** The filler is no longer wanted (the turn settled). */
  stopFiller(): void {
    if (this.#fillerTimer) clearTimeout(this.#fillerTimer);
    this.#fillerTimer = null;
  }

  /** `text` rendered for speech if it fits the room left; cut to the room when that is enough to say something. */
  #fitted(text: string, language: string, render: ReplyRenderer): string {
    const whole = render({ text, source: null, language }, Number.MAX_SAFE_INTEGER);
    const room = MAX_SPOKEN_CHARS - this.#sentChars;
    if (whole.length <= room) return whole;
    this.#full = true;
    return room >= MIN_SPOKEN_REST_CHARS ? render({ text, source: null, language }, room) : '';
  }
}
