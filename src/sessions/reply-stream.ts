/**
 * A turn whose reply is spoken while the AI is still writing it (the phone with an LLM that streams; docs/phone.md,
 * Streamed replies). The AI hands over the answer sentence by sentence; each goes out rendered by the channel's
 * renderer, within the spoken length of a whole reply, and at the turn's end only the rest is said.
 */
import type { HandoffResult } from '../../machines/session-types.ts';
import { MAX_SPOKEN_CHARS } from '../ai/limits.ts';
import { phrase } from '../ai/phrases.ts';
import type { AiStep } from '../ai/types.ts';
import type { ReplyRenderer } from './reply-renderer.ts';

/** Less room than this left of the spoken length, and a piece or rest that does not fit is not cut to it. */
const MIN_SPOKEN_REST_CHARS = 40;

export interface ReplyStream {
  readonly turnId: string;
  readonly onText: (text: string) => void;
  /** The rendered pieces that went out. */
  readonly sent: readonly string[];
  /** A piece of the answer as it should be said, counted as sent; null when nothing of it is to be said. */
  speak(piece: string, language: string): string | null;
  /**
   * The AI step as the machine should record it: what earlier steps said before calling tools begins the answer; how
   * much of the answer was spoken is remembered, so only the rest goes out at the end.
   */
  record(step: AiStep): AiStep;
  /** What is still to be said at the turn's end: the rest of the answer (in the room left) and the handoff sentence. */
  rest(reply: { answer: string; language: string; handoff: HandoffResult | null }): string;
}

export function createReplyStream(turnId: string, onText: (text: string) => void, render: ReplyRenderer): ReplyStream {
  const sent: string[] = [];
  /** The length of what was sent, a space between pieces. */
  let sentChars = 0;
  /** What earlier AI steps of this turn said before they called tools. */
  const said: string[] = [];
  /** How the answer the machine records begins: the part of it already spoken (raw, before rendering). */
  let spokenAnswer = '';
  /** The spoken length is used up: nothing more of the answer is said. */
  let full = false;

  /** `text` rendered for speech if it fits the room left; cut to the room when that is enough to say something. */
  function fitted(text: string, language: string): string {
    const whole = render({ text, source: null, language }, Number.MAX_SAFE_INTEGER);
    const room = MAX_SPOKEN_CHARS - sentChars;
    if (whole.length <= room) return whole;
    full = true;
    return room >= MIN_SPOKEN_REST_CHARS ? render({ text, source: null, language }, room) : '';
  }

  return {
    turnId,
    onText,
    sent,
    speak(piece, language) {
      if (full) return null;
      const text = fitted(piece, language);
      if (text === '') return null;
      sent.push(text);
      sentChars += text.length + 1;
      return text;
    },
    record(step) {
      if (step.kind === 'tool_calls') {
        if (step.said) said.push(step.said);
        return step;
      }
      const before = said.join(' ');
      const spoken = step.streamed ? step.text.slice(0, step.streamed) : '';
      spokenAnswer = [before, spoken].filter((t) => t !== '').join(' ');
      return before === '' ? step : { ...step, text: `${before} ${step.text}` };
    },
    rest({ answer, language, handoff }) {
      let rest = '';
      if (answer.trim() === '') rest = phrase('dont_know', language);
      else if (!full) rest = answer.startsWith(spokenAnswer) ? answer.slice(spokenAnswer.length).trim() : answer;
      const parts = [rest === '' ? '' : fitted(rest, language), handoff?.sentence ? render({ text: handoff.sentence, source: null, language }) : ''];
      return parts.filter((t) => t !== '').join(' ');
    },
  };
}
