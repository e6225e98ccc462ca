/**
 * A turn's expectations checked against what came back (docs/scenarios.md, "Expectations"). Deterministic: the same
 * reply, source, handoff, tool calls and time always give the same verdict. Each failure says what was expected and
 * what came back, in words a person reads in a CI log.
 */
import { isDeepStrictEqual } from 'node:util';
import { patternInputLimit } from '../botlink/pattern-safety.ts';
import { cutToChars } from '../text/cut.ts';
import type { ScenarioExpect } from './scenario-schema.ts';

/** What one turn of a test conversation gave. */
export interface TurnOutcome {
  /** The reply as the customer got it; null when none came (a person handles the conversation, or none was written). */
  reply: string | null;
  /** Who answered: integrator, knowledge_base, ai, fallback; null without a reply. */
  source: string | null;
  handoff: { kind: 'human' | 'forward'; connected: boolean } | null;
  /** The tool calls the AI made in the turn, in order. */
  tools: { name: string; args: unknown; ok: boolean }[];
  /** From the message to the reply, in milliseconds. */
  ms: number;
  /** Why there is no reply, when there is none. */
  noReply?: string;
}

export interface ExpectationFailure {
  expectation: string;
  got: string;
}

/** How much of a reply a failure quotes. */
const QUOTED_CHARS = 500;

export function checkTurn(expect: ScenarioExpect | undefined, outcome: TurnOutcome): ExpectationFailure[] {
  if (!expect) return [];
  const failures: ExpectationFailure[] = [];
  const fail = (expectation: string, got: string) => failures.push({ expectation, got });
  const reply = outcome.reply;
  const gotReply = reply === null ? `no reply (${outcome.noReply ?? 'none came'})` : JSON.stringify(cutToChars(reply, QUOTED_CHARS));
  const lower = reply?.toLowerCase() ?? null;

  for (const wanted of expect.contains ?? []) {
    if (lower === null || !lower.includes(wanted.toLowerCase())) fail(`contains ${JSON.stringify(wanted)}`, gotReply);
  }
  for (const unwanted of expect.not_contains ?? []) {
    if (lower !== null && lower.includes(unwanted.toLowerCase())) fail(`not_contains ${JSON.stringify(unwanted)}`, gotReply);
  }
  if (expect.matches !== undefined) {
    const expectation = `matches /${expect.matches}/`;
    if (reply === null) fail(expectation, gotReply);
    // A pattern that passed the check may still grow polynomially: it runs only on what it may run on quickly.
    else if (patternInputLimit(expect.matches, reply.length) < reply.length) fail(expectation, `a reply of ${reply.length} characters, too long to run this pattern on safely; simplify it`);
    else if (!new RegExp(expect.matches, 'u').test(reply)) fail(expectation, gotReply);
  }
  if (expect.source !== undefined && outcome.source !== expect.source) fail(`source ${expect.source}`, outcome.source ?? 'no reply');
  if (expect.handoff !== undefined) {
    const kind = outcome.handoff?.kind ?? null;
    const met = typeof expect.handoff === 'boolean' ? (kind !== null) === expect.handoff : kind === expect.handoff;
    if (!met) fail(`handoff ${String(expect.handoff)}`, kind === null ? 'no handoff' : `${kind}${outcome.handoff?.connected ? ' (connected)' : ''}`);
  }
  if (expect.tool !== undefined) {
    const { name, args } = expect.tool;
    const met = outcome.tools.some((call) => call.name === name && (args === undefined || argsMatch(call.args, args)));
    if (!met) fail(`tool ${name}${args === undefined ? '' : ` ${JSON.stringify(args)}`}`, outcome.tools.length === 0 ? 'no tool was called' : outcome.tools.map((c) => `${c.name} ${JSON.stringify(c.args)}`).join('; '));
  }
  if (expect.max_ms !== undefined && outcome.ms > expect.max_ms) fail(`max_ms ${expect.max_ms}`, `${Math.round(outcome.ms)} ms`);
  return failures;
}

/** Each key given deep-equals the call's; keys not given are not looked at. */
function argsMatch(actual: unknown, wanted: Record<string, unknown>): boolean {
  if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return false;
  const given = actual as Record<string, unknown>;
  return Object.entries(wanted).every(([key, value]) => Object.hasOwn(given, key) && isDeepStrictEqual(given[key], value));
}
