/**
 * What the integrator's endpoint answered (protocol §2.2) and whether it counts as an answer (protocol §7).
 *
 * The rule of the house here: whatever is wrong in a response becomes a recorded {@link ResponseProblem}, never a
 * crash. A field that is wrong is dropped or replaced by its default, and only what protocol §7 names (a status other
 * than 2xx, invalid JSON, an empty reply, a timeout) turns the response into no answer.
 */
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { MAX_EMAIL_CHARS, MAX_NAME_CHARS, MAX_REPLY_CHARS, MAX_RESPONSE_BYTES, BODY_EXCERPT_CHARS } from '../limits.ts';
import { cleanJson, cleanText } from '../text/outside-text.ts';
import { cutToChars } from '../text/cut.ts';
import type { Handoff } from '../channels-and-handoffs.ts';
import { describeValue, isObject, own } from '../json-value.ts';
import { errorText, type FailureReason } from '../errors.ts';

/** protocol §2.2: 'human' connects the customer to a person, 'forward' has the team follow up. */

/** A response that counts as an answer, with every wrong field already dropped or defaulted. */
export interface ChannelAnswer {
  /** Never empty, at most MAX_REPLY_CHARS characters. */
  reply: string;
  /** protocol §2.2: only an explicit false is false. */
  handled: boolean;
  handoff: Handoff | null;
  /** Only the fields that were valid; the name is trimmed. */
  customer: { email?: string; name?: string };
}

/** One thing wrong with a response, for the dashboard and the session record. */
export interface ResponseProblem {
  /** The field's path in the response, dotted: 'reply', 'customer.email'. */
  field: string;
  /** What is wrong and what the service did about it: 'is not a valid email address; ignored'. */
  message: string;
}

/**
 * Why a response is no answer. The first five come from {@link interpretChannelResponse} ('invalid_response' only if
 * interpreting failed in a way nobody foresaw); the others are decided by the HTTP client before a response exists.
 */
export type NoAnswerReason = Extract<
  FailureReason,
  'status' | 'invalid_json' | 'cut_off' | 'empty_reply' | 'invalid_response' | 'timeout' | 'invalid_url' | 'refused_address' | 'tls' | 'connection' | 'aborted' | 'not_configured'
>;

export type ChannelOutcome =
  | { outcome: 'answer'; answer: ChannelAnswer; problems: ResponseProblem[] }
  | { outcome: 'no_answer'; reason: NoAnswerReason; message: string; problems: ResponseProblem[]; parsed?: unknown };

export type NoAnswerOutcome = Extract<ChannelOutcome, { outcome: 'no_answer' }>;

/** A no-answer outcome; also for the HTTP client's own reasons (timeout, refused address, TLS, …). */
export function noAnswer(reason: NoAnswerReason, message: string, problems: ResponseProblem[] = [], parsed?: unknown): NoAnswerOutcome {
  // A message may quote the endpoint's bytes (JSON.parse's error does): it is outside text too, stored with the turn.
  return { outcome: 'no_answer', reason, message: cleanText(message), problems, ...(parsed === undefined ? {} : { parsed }) };
}

/**
 * The response of protocol §2.2 as a JSON Schema: what a fully correct response looks like. Every way a response departs
 * from it is reported as a problem; what the service then does with the field is decided in
 * {@link interpretChannelResponse}. Unknown fields are allowed (and ignored), so an integrator may add its own.
 *
 * null for customer, customer.email and customer.name is accepted as "not known": it is how JSON says absent, and the
 * request itself sends customer.phone null for an unknown number (protocol §2.1).
 */
export const channelResponseSchema = {
  type: 'object',
  required: ['reply'],
  properties: {
    // protocol §2.2: an empty reply counts as no answer; whitespace only is empty to a listener too.
    reply: { type: 'string', pattern: '\\S', maxLength: MAX_REPLY_CHARS },
    handled: { type: 'boolean' },
    handoff: { enum: ['human', 'forward', null] },
    customer: {
      type: ['object', 'null'],
      properties: {
        email: { type: ['string', 'null'], maxLength: MAX_EMAIL_CHARS, format: 'email' },
        name: { type: ['string', 'null'], pattern: '\\S', maxLength: MAX_NAME_CHARS },
      },
    },
  },
} as const;

// ajv-formats is CommonJS; under Node's ESM interop its default import is module.exports, whose `default` is the plugin.
const addFormats = addFormatsModule.default;
// Compiled once at module load. allErrors: every problem of a response is reported, not only the first one.
// verbose: the errors carry the offending value, so a problem can say what was sent instead.
const ajv = new Ajv({ allErrors: true, verbose: true, allowUnionTypes: true });
addFormats(ajv, ['email']);
const validateResponse = ajv.compile(channelResponseSchema);

/** What the service does with a wrong field, by its path. */
const CONSEQUENCE: Record<string, string> = {
  handled: 'treated as true',
  handoff: 'treated as null (no handoff)',
  customer: 'ignored',
  'customer.email': 'ignored',
  'customer.name': 'ignored',
};
const REPLY_TOO_LONG = `cut to ${MAX_REPLY_CHARS} characters`;
const NO_ANSWER = 'counts as no answer';

/** protocol §7.1: an endpoint that answers with anything but 2xx gave no answer. */
function isSuccess(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 299;
}

/** A property of the response itself, never one inherited through the prototype. */

/** A JSON pointer ('/customer/email') as the dotted path the dashboard shows ('customer.email'). */
function fieldOf(error: ErrorObject): string {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (error.keyword === 'required') parts.push(String((error.params as { missingProperty?: unknown }).missingProperty));
  return parts.join('.');
}

/** One Ajv error in words, without the field name (the problem carries that). */
function explain(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is missing';
    case 'type': {
      const wanted = String((error.params as { type?: unknown }).type).replace(',null', '');
      return `must be ${wanted === 'object' ? 'an' : 'a'} ${wanted}, not ${describeValue(error.data)}`;
    }
    case 'maxLength':
      return `is longer than ${String((error.params as { limit?: unknown }).limit)} characters`;
    case 'pattern':
      return error.data === '' ? 'is empty' : 'is only whitespace';
    case 'format':
      return 'is not a valid email address';
    case 'enum':
      return `must be "human", "forward" or null, not ${describeValue(error.data)}`;
    default:
      return error.message ?? `fails the ${error.keyword} rule`;
  }
}

/** The schema's errors grouped by field, in the order they were found. */
function errorsByField(errors: readonly ErrorObject[]): Map<string, ErrorObject[]> {
  const byField = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    const field = fieldOf(error);
    const list = byField.get(field);
    if (list) list.push(error);
    else byField.set(field, [error]);
  }
  return byField;
}

/** Whether the only thing wrong with the reply is its length, which is mended by cutting it. */
function onlyTooLong(errors: readonly ErrorObject[] | undefined): boolean {
  return errors !== undefined && errors.every((e) => e.keyword === 'maxLength');
}

// fatal: RFC 8259 §8.1 requires UTF-8; a body that is not is named as such rather than parsed with U+FFFD in it.
// One decoder for every response: a decode without { stream: true } starts from a fresh state (WHATWG Encoding), also
// after one that failed, and a decoder per response was garbage on every request.
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(body: Buffer): { ok: true; text: string } | { ok: false; message: string } {
  try {
    return { ok: true, text: utf8.decode(body) };
  } catch {
    return { ok: false, message: 'The body is not valid UTF-8 text, so it is not valid JSON (protocol §7.1: no answer).' };
  }
}

/** The body as JSON when it is; undefined otherwise. For showing what came with a non-2xx status. */
function tryParse(body: Buffer): unknown {
  const decoded = decode(body);
  if (!decoded.ok || decoded.text.trim() === '') return undefined;
  try {
    return cleanJson(JSON.parse(decoded.text) as unknown);
  } catch {
    return undefined;
  }
}

/**
 * Classify a response that arrived: its HTTP status, its raw body bytes, and whether the body was cut at
 * MAX_RESPONSE_BYTES (protocol §7.2). Never throws, whatever the bytes.
 *
 * - a status other than 2xx: no answer, 'status' (protocol §7.1);
 * - a body cut at 64 KB: no answer, 'cut_off': the cut body cannot be read, however much of it was JSON;
 * - not UTF-8, not JSON, or JSON that is not an object: no answer, 'invalid_json' (protocol §2.2, §7.1);
 * - reply missing, not a string, empty or only whitespace: no answer, 'empty_reply' (protocol §2.2, §7.1);
 * - reply longer than MAX_REPLY_CHARS: still an answer, cut to the limit (see {@link cutToChars}) with a problem.
 *   protocol §2.2 says "at most 2000 characters" and protocol §7 does not make a long reply no answer: it is still the
 *   integrator's answer to this customer, and the built-in AI would know less than the integrator's system;
 * - handled: only an explicit false is false (protocol §2.2); a value that is not a boolean counts as true, with a problem;
 * - handoff: 'human', 'forward', null or absent; anything else is null with a problem: an invalid handoff value is a
 *   problem, never a decision to hand the customer off;
 * - customer.email (valid address, at most MAX_EMAIL_CHARS) and customer.name (not blank, at most MAX_NAME_CHARS,
 *   trimmed): kept when valid, dropped with a problem otherwise;
 * - unknown fields: ignored without a problem.
 */
export function interpretChannelResponse(status: number, body: Buffer, truncated: boolean): ChannelOutcome {
  try {
    return interpret(status, body, truncated);
  } catch (err) {
    // Nothing above is expected to throw; should it, the conversation must still go on (protocol §1.8).
    return noAnswer('invalid_response', `The response could not be interpreted: ${String(err)}`);
  }
}

function interpret(status: number, body: Buffer, truncated: boolean): ChannelOutcome {
  if (!isSuccess(status)) {
    return noAnswer('status', `The endpoint answered HTTP ${status}; only a 2xx status is an answer (protocol §7.1).`, [], tryParse(body));
  }
  if (truncated) {
    return noAnswer(
      'cut_off',
      `The response is larger than ${MAX_RESPONSE_BYTES / 1024} KB and was cut off at that size (protocol §7.2); ` +
        'a cut-off body is not valid JSON, so it is no answer.',
    );
  }

  const decoded = decode(body);
  if (!decoded.ok) return noAnswer('invalid_json', decoded.message);
  if (decoded.text.trim() === '') {
    return noAnswer('invalid_json', 'The body is empty; an answer is a JSON object with a reply (protocol §2.2).');
  }
  let parsed: unknown;
  try {
    // The integrator's text follows the outside-text rule from here on (src/text/outside-text.ts).
    parsed = cleanJson(JSON.parse(decoded.text) as unknown);
  } catch (err) {
    const detail = errorText(err);
    return noAnswer('invalid_json', `The body is not valid JSON (${detail}); protocol §7.1: no answer.`);
  }
  if (!isObject(parsed)) {
    return noAnswer('invalid_json', `The body is JSON but ${describeValue(parsed)}, not an object with a reply (protocol §2.2).`, [], parsed);
  }

  const byField = validateResponse(parsed) ? new Map<string, ErrorObject[]>() : errorsByField(validateResponse.errors ?? []);
  const replyErrors = byField.get('reply');
  const replyUsable = replyErrors === undefined || onlyTooLong(replyErrors);
  const problems: ResponseProblem[] = [];
  for (const [field, errors] of byField) {
    const consequence = field === 'reply' ? (replyUsable ? REPLY_TOO_LONG : NO_ANSWER) : (CONSEQUENCE[field] ?? 'ignored');
    problems.push({ field, message: `${errors.map(explain).join(' and ')}; ${consequence}` });
  }

  const reply = own(parsed, 'reply');
  if (!replyUsable || typeof reply !== 'string') {
    const why = replyErrors ? replyErrors.map(explain).join(' and ') : 'is not usable';
    return noAnswer('empty_reply', `The reply ${why}; an empty reply is no answer (protocol §2.2, §7.1).`, problems, parsed);
  }

  const handled = own(parsed, 'handled');
  const handoff = own(parsed, 'handoff');
  const answer: ChannelAnswer = {
    reply: cutToChars(reply, MAX_REPLY_CHARS),
    handled: byField.has('handled') ? true : handled !== false,
    handoff: !byField.has('handoff') && (handoff === 'human' || handoff === 'forward') ? handoff : null,
    customer: {},
  };
  const customer = own(parsed, 'customer');
  if (isObject(customer) && !byField.has('customer')) {
    const email = own(customer, 'email');
    if (typeof email === 'string' && !byField.has('customer.email')) answer.customer.email = email;
    const name = own(customer, 'name');
    if (typeof name === 'string' && !byField.has('customer.name')) answer.customer.name = name.trim();
  }
  return { outcome: 'answer', answer, problems };
}

/** Bytes decoded beyond the worst case, so that the grapheme at the cut is seen whole. */
const EXCERPT_MARGIN_BYTES = 1024;

/**
 * The start of a body as text for the dashboard: UTF-8 (bytes that are not become U+FFFD; a leading BOM is shown, as
 * it was sent), at most `maxChars` characters, never a split character, and outside text made storable (U+0000).
 */
export function bodyExcerpt(body: Buffer, maxChars: number = BODY_EXCERPT_CHARS): string {
  const max = Math.max(0, Math.floor(maxChars));
  // A character is at most 4 bytes in UTF-8, so this prefix holds the first `max` characters whole; the margin keeps
  // the grapheme at the cut whole too (a character cut at the end of the prefix decodes as U+FFFD, past the cut).
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(body.subarray(0, max * 4 + EXCERPT_MARGIN_BYTES));
  return cleanText(cutToChars(text, max));
}
