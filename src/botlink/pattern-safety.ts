/**
 * ReDoS safety of the regular expressions an integrator's tool schema brings (`pattern`, `patternProperties`): a
 * conservative star-height check that refuses the exponential shapes ({@link unsafePatternReason}), and for the
 * polynomial ones that pass, the longest input they may be run on ({@link patternInputLimit}) within
 * {@link PATTERN_STEP_BUDGET} backtracking steps. Used by the schema compiler (./tool-schema.ts) while it walks a schema
 * and again inside Ajv's RegExp engine.
 */

// ── The analysis ─────────────────────────────────────────────────────────────────────────────────────────────────────

interface GroupFrame {
  /** Something inside can match a varying number of times (`*`, `+`, `?`, `{n,m}` with m > n). */
  variable: boolean;
  /** Something inside has alternatives (`|`). */
  alternation: boolean;
}

type Quantified = { kind: 'atom' } | ({ kind: 'group' } & GroupFrame) | null;

/** `*`, `+`, `?`, `{n}`, `{n,}` or `{n,m}` at `i`, with its bounds and where it ends; null if there is none. */
function readQuantifier(pattern: string, i: number): { min: number; max: number; end: number } | null {
  const c = pattern[i];
  if (c === '*') return { min: 0, max: Infinity, end: i + 1 };
  if (c === '+') return { min: 1, max: Infinity, end: i + 1 };
  if (c === '?') return { min: 0, max: 1, end: i + 1 };
  if (c !== '{') return null;
  const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 40));
  if (m === null) return null;
  const min = Number(m[1]);
  const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
  return { min, max, end: i + m[0].length };
}

/** The index just past the character class that opens at `i` (JS: a `]` right after `[` or `[^` closes it). */
function endOfClass(pattern: string, i: number): number {
  let j = i + 1;
  while (j < pattern.length) {
    if (pattern[j] === '\\') j += 2;
    else if (pattern[j] === ']') return j + 1;
    else j += 1;
  }
  return pattern.length;
}

/** The index just past a group's opening: `(`, `(?:`, `(?=`, `(?!`, `(?<=`, `(?<!`, `(?<name>`, `(?i:`. */
function endOfGroupOpening(pattern: string, i: number): number {
  if (pattern[i + 1] !== '?') return i + 1;
  const kind = pattern[i + 2];
  if (kind === ':' || kind === '=' || kind === '!') return i + 3;
  if (kind === '<') {
    if (pattern[i + 3] === '=' || pattern[i + 3] === '!') return i + 4;
    const close = pattern.indexOf('>', i + 3);
    return close < 0 ? pattern.length : close + 1;
  }
  const colon = pattern.indexOf(':', i + 2); // modifiers, (?i:…)
  return colon < 0 ? pattern.length : colon + 1;
}

/**
 * What the ReDoS guard finds in a pattern: whether it is refused, and what its worst-case matching time grows with.
 * `unbounded` counts the quantifiers without an upper bound (`*`, `+`, `{n,}`), plus one when the pattern is not
 * anchored with a leading `^` (the engine then tries every start position); `widths` are the number of choices of each
 * bounded varying quantifier (`{1,3}`: 3, `?`: 2).
 */
interface PatternAnalysis {
  unsafe: string | null;
  unbounded: number;
  widths: number[];
}

function analysePattern(pattern: string): PatternAnalysis {
  const stack: GroupFrame[] = [{ variable: false, alternation: false }];
  const widths: number[] = [];
  let unbounded = 0;
  let last: Quantified = null;
  let i = 0;
  const refuse = (unsafe: string): PatternAnalysis => ({ unsafe, unbounded, widths });
  while (i < pattern.length) {
    const c = pattern[i]!;
    const top = stack.at(-1)!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next !== undefined && next >= '1' && next <= '9') {
        return refuse('uses a backreference (\\1 …), whose matching time can explode');
      }
      if (next === 'k' && pattern[i + 2] === '<') return refuse('uses a named backreference (\\k<…>), whose matching time can explode');
      if ((next === 'p' || next === 'P' || next === 'u') && pattern[i + 2] === '{') {
        const close = pattern.indexOf('}', i + 3);
        i = close < 0 ? pattern.length : close + 1;
      } else {
        i += 2;
      }
      last = { kind: 'atom' };
    } else if (c === '[') {
      i = endOfClass(pattern, i);
      last = { kind: 'atom' };
    } else if (c === '(') {
      stack.push({ variable: false, alternation: false });
      i = endOfGroupOpening(pattern, i);
      last = null;
    } else if (c === ')') {
      // An unbalanced `)` is a syntax error that `new RegExp` reports; here it just closes nothing.
      const frame = stack.length > 1 ? stack.pop()! : { variable: false, alternation: false };
      const parent = stack.at(-1)!;
      parent.variable ||= frame.variable;
      parent.alternation ||= frame.alternation;
      last = { kind: 'group', ...frame };
      i += 1;
    } else if (c === '|') {
      top.alternation = true;
      last = null;
      i += 1;
    } else {
      const quantifier = readQuantifier(pattern, i);
      if (quantifier === null) {
        last = { kind: 'atom' }; // a literal, `.`, `^`, `$`, or a `{` that is not a quantifier
        i += 1;
        continue;
      }
      if (last !== null) {
        if (quantifier.max > 1 && last.kind === 'group' && (last.variable || last.alternation)) {
          return refuse(
            last.variable
              ? 'repeats a group that itself contains a repetition, as in (a+)+, whose matching time can explode; ' +
                  'repeat a single character class instead, as in [a-z0-9.]+'
              : 'repeats a group with alternatives, as in (a|b)+, whose matching time can explode; ' +
                  'use a character class such as [ab]+ instead',
          );
        }
        if (quantifier.max > quantifier.min) {
          top.variable = true;
          if (quantifier.max === Infinity) unbounded += 1;
          else widths.push(quantifier.max - quantifier.min + 1);
        }
      }
      i = quantifier.end;
      if (pattern[i] === '?') i += 1; // lazy
      last = null;
    }
  }
  // Conservative: any alternation at all may hide an unanchored branch (`^a|b+`).
  const anchored = pattern.startsWith('^') && !stack[0]!.alternation;
  return { unsafe: null, unbounded: unbounded + (anchored ? 0 : 1), widths };
}

/**
 * Why a regular expression could take exponential time on a backtracking engine like V8's, or null when it passes.
 * Conservative on purpose (a false alarm drops one tool with a problem that says how to rewrite the pattern; a miss
 * could stall the process for every workspace):
 *
 * - a backreference (`\1`, `\k<name>`) is refused: matching with one is NP-hard;
 * - a group repeated more than once (`*`, `+`, `{n,}`, `{n,m}` with m > 1) may contain neither a varying quantifier
 *   (`(a+)+`, `(a?){20}`, `(\d{1,3}\.)+`) nor alternatives (`(a|a)*`, `(cat|dog)+`): together these are star height
 *   above one and overlapping alternation, the two shapes behind exponential backtracking;
 * - a group that is merely optional (`(\+31)?`) or repeated a fixed number of times over fixed content (`(\d{3}-){2}`)
 *   is fine, as is any quantifier on a single character, class or escape.
 *
 * What remains is polynomial (`\d*\d*\d*` is cubic: 2.8 s on 2000 digits): that is bounded by
 * {@link patternInputLimit} instead of refused. The pattern's syntax is left to `new RegExp`.
 */
export function unsafePatternReason(pattern: string): string | null {
  return analysePattern(pattern).unsafe;
}

/**
 * Worst-case backtracking steps one pattern may take on one value: 10 million, some 20 ms in V8. A pattern that
 * passes {@link unsafePatternReason} has star height at most one, so its steps on n characters are at most about
 * (n + 1) to the power of its unbounded quantifiers (plus one if unanchored), times the widths of its bounded ones.
 */
export const PATTERN_STEP_BUDGET = 10_000_000;

/**
 * The longest value (in UTF-16 units, at most `maxChars`: the tool schema passes MAX_TOOL_ARG_STRING_CHARS) that `pattern` is run on, so its
 * worst case stays within {@link PATTERN_STEP_BUDGET}. Ordinary patterns (`^[A-Z0-9]+$`, `\d+$`) get the full
 * 2000; `^[^@\s]+@[^@\s]+\.[^@\s]+$` gets 214; `^\d*\d*\d*\d*$` gets 55. A longer value is refused with a
 * sentence instead of matched.
 */
export function patternInputLimit(pattern: string, maxChars: number): number {
  const { unbounded, widths } = analysePattern(pattern);
  const budget = Math.log(PATTERN_STEP_BUDGET);
  const logSteps = (n: number): number => unbounded * Math.log(n + 1) + widths.reduce((sum, w) => sum + Math.log(Math.min(n + 1, w)), 0);
  if (logSteps(maxChars) <= budget) return maxChars;
  let low = 0;
  let high = maxChars;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (logSteps(mid) <= budget) low = mid;
    else high = mid - 1;
  }
  return low;
}
