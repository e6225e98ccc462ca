/**
 * The ConversationRelay frames (docs/interfaces.md, Channels → Phone; Twilio's "WebSocket messages", which Telnyx speaks
 * too). Inbound frames are checked field by field: a frame that does not fit is dropped by the caller with the reason
 * given here, never answered with an error frame. Fields we do not use (accountSid, callStatus, …) are ignored, so a
 * bridge that sends more than Twilio does still works.
 *
 * The bridge's text follows the outside-text rule (src/text/outside-text.ts): it is applied once, to the parsed frame.
 */
import { cleanJson } from '../../text/outside-text.ts';

/** Longest id or number we keep from a frame; Twilio's are 34 characters. */
const MAX_ID_CHARS = 128;
const MAX_CUSTOM_PARAMETERS = 32;

export interface SetupFrame {
  type: 'setup';
  /** The relay session (Twilio VX…); logged only. */
  sessionId: string | null;
  /** The call (Twilio CA…): the session_id sent to the integrator (protocol §2.1). */
  callSid: string;
  from: string;
  to: string;
  customParameters: Record<string, string>;
}

export interface PromptFrame {
  type: 'prompt';
  voicePrompt: string;
  /** BCP 47 as the speech recogniser reports it ('nl-NL'); null when absent. */
  lang: string | null;
  /** false: a partial transcript, more of the same utterance follows. */
  last: boolean;
}

export interface InterruptFrame {
  type: 'interrupt';
  /** What the caller heard of our reply before speaking over it. */
  utteranceUntilInterrupt: string | null;
  durationUntilInterruptMs: number | null;
}

export interface DtmfFrame {
  type: 'dtmf';
  digit: string;
}

export interface ErrorFrame {
  type: 'error';
  description: string;
}

export type InboundFrame = SetupFrame | PromptFrame | InterruptFrame | DtmfFrame | ErrorFrame;

export type DropReason = 'invalid_json' | 'not_an_object' | 'unknown_type' | 'invalid_fields' | 'too_large' | 'binary' | 'before_setup' | 'duplicate_setup';

export type ParsedFrame = { ok: true; frame: InboundFrame } | { ok: false; reason: DropReason; detail: string };

const invalid = (detail: string): ParsedFrame => ({ ok: false, reason: 'invalid_fields', detail });

/** The first `max` UTF-16 units of `text`, one fewer where the cut would split a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS;
}

/** Parses one text frame. */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = cleanJson(JSON.parse(text) as unknown);
  } catch {
    return { ok: false, reason: 'invalid_json', detail: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: 'not_an_object', detail: typeof value };
  const f = value as Record<string, unknown>;
  switch (f.type) {
    case 'setup': {
      if (!isId(f.callSid)) return invalid('setup.callSid must be a non-empty string');
      if (typeof f.to !== 'string' || f.to.length > MAX_ID_CHARS) return invalid('setup.to must be a string');
      if (f.from !== undefined && f.from !== null && (typeof f.from !== 'string' || f.from.length > MAX_ID_CHARS)) return invalid('setup.from must be a string');
      const parameters: [string, string][] = [];
      if (f.customParameters !== undefined && f.customParameters !== null) {
        if (typeof f.customParameters !== 'object' || Array.isArray(f.customParameters)) return invalid('setup.customParameters must be an object');
        for (const [k, v] of Object.entries(f.customParameters).slice(0, MAX_CUSTOM_PARAMETERS)) {
          if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parameters.push([cut(k, MAX_ID_CHARS), cut(String(v), 1000)]);
        }
      }
      // fromEntries defines own properties, so a parameter named "__proto__" is kept like any other.
      const customParameters: Record<string, string> = Object.fromEntries(parameters);
      return {
        ok: true,
        frame: {
          type: 'setup',
          sessionId: isId(f.sessionId) ? f.sessionId : null,
          callSid: f.callSid,
          from: typeof f.from === 'string' ? f.from : '',
          to: f.to,
          customParameters,
        },
      };
    }
    case 'prompt': {
      if (typeof f.voicePrompt !== 'string') return invalid('prompt.voicePrompt must be a string');
      if (f.last !== undefined && typeof f.last !== 'boolean') return invalid('prompt.last must be a boolean');
      if (f.lang !== undefined && f.lang !== null && (typeof f.lang !== 'string' || f.lang.length > 35)) return invalid('prompt.lang must be a language tag');
      // Twilio always sends `last`; a bridge that does not stream partials may leave it out: then it is final.
      return { ok: true, frame: { type: 'prompt', voicePrompt: f.voicePrompt, lang: typeof f.lang === 'string' && f.lang !== '' ? f.lang : null, last: f.last !== false } };
    }
    case 'interrupt': {
      const spoken = f.utteranceUntilInterrupt;
      if (spoken !== undefined && spoken !== null && typeof spoken !== 'string') return invalid('interrupt.utteranceUntilInterrupt must be a string');
      const duration = f.durationUntilInterruptMs;
      return {
        ok: true,
        frame: {
          type: 'interrupt',
          utteranceUntilInterrupt: typeof spoken === 'string' ? spoken : null,
          durationUntilInterruptMs: typeof duration === 'number' && Number.isFinite(duration) ? duration : null,
        },
      };
    }
    case 'dtmf': {
      if (typeof f.digit !== 'string' || !/^[0-9*#A-Da-d]$/.test(f.digit)) return invalid('dtmf.digit must be one key');
      return { ok: true, frame: { type: 'dtmf', digit: f.digit.toUpperCase() } };
    }
    case 'error':
      return { ok: true, frame: { type: 'error', description: typeof f.description === 'string' ? cut(f.description, 500) : '' } };
    default:
      return { ok: false, reason: 'unknown_type', detail: typeof f.type === 'string' ? `type ${cut(f.type, 40)}` : 'no type' };
  }
}

// ── Outbound ──────────────────────────────────────────────────────────────────────────────────────────────────────

export interface TextFrame {
  type: 'text';
  token: string;
  last: boolean;
  lang?: string;
  /** The next talk cycle may cut this one off (the filler: the answer replaces it as soon as it is ready). */
  preemptible?: boolean;
}

export interface EndFrame {
  type: 'end';
  /** A JSON string; Twilio passes it to the <Connect> action as HandoffData. */
  handoffData?: string;
}

export interface LanguageFrame {
  type: 'language';
  ttsLanguage: string;
  transcriptionLanguage: string;
}

export type OutboundFrame = TextFrame | EndFrame | LanguageFrame;

/**
 * What handoffData carries (at least `reason`, docs/interfaces.md): 'human' connects a person, 'forward' hands the caller
 * to the team's follow-up, 'reconnect' asks the action to connect the call to a running instance again (drain),
 * 'busy' says the engine refused the call at its bound (docs/operations.md, "Overload"; the action hangs up: the
 * caller has heard the busy sentence already).
 */
export interface HandoffData {
  reason: 'human' | 'forward' | 'reconnect' | 'busy';
  /** Our session id, so the action and the team find the conversation. */
  session_id: string;
  /**
   * Why a person was asked for: 'integrator' (the bot link's handoff), 'dtmf' (the caller pressed 0) or 'speech' (the
   * caller asked in words, or said yes when offered a person).
   */
  requested_by?: 'integrator' | 'dtmf' | 'speech';
}

export function parseHandoffData(value: unknown): HandoffData | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) return null;
  try {
    const data = cleanJson(JSON.parse(value) as Partial<HandoffData> | null);
    if (data && (data.reason === 'human' || data.reason === 'forward' || data.reason === 'reconnect')) {
      return { reason: data.reason, session_id: typeof data.session_id === 'string' ? data.session_id : '' };
    }
  } catch {
    // Not ours: treated as no handoff.
  }
  return null;
}
