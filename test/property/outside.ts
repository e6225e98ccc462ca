/**
 * What the property tests feed the parsers: text and JSON as anyone outside may send it. The rule under test is the
 * one of src/text/outside-text.ts: after parsing, no string holds U+0000 or a lone surrogate, and the text is
 * otherwise what was sent.
 *
 * fast-check's own `unit: 'binary'` strings almost never hold a lone surrogate and seldom U+0000, so the unit here
 * mixes them in on purpose, together with characters that must pass unchanged (emoji, other controls, bidi marks,
 * U+FFFD itself).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { isCleanText } from '../../src/text/outside-text.ts';

/**
 * fast-check settings of the properties that go through the real service: each stops after 3 s (a loaded machine
 * runs fewer cases; a failure found is still reported, shrunk as far as the time allowed).
 */
export const OVER_HTTP = { interruptAfterTimeLimit: 3_000 } as const;

/** Characters that cannot be stored: U+0000 and halves of surrogate pairs. */
export const UNSTORABLE = ['\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '\uD83D', '\uDE00'] as const;
/** Characters that are storable and must arrive as they were sent. */
const KEPT = ['😀', '👩‍👩‍👧', '\u0001', '\u001f', '\u007f', '\u200f', '\u202e', '\uFEFF', '\uFFFD', ' ', '\n', '"', '\\', 'é'] as const;

/** One character of outside text; a string of these may pair two halves into a real surrogate pair, which is fine. */
export const outsideUnit: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(...UNSTORABLE) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) },
  { weight: 2, arbitrary: fc.constantFrom(...KEPT) },
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'x', '1', '.', '?') },
);

/** Any text from outside. */
export function outsideText(constraints: { minLength?: number; maxLength?: number } = {}): fc.Arbitrary<string> {
  return fc.string({ unit: outsideUnit, ...constraints });
}

/** Text that holds at least one unstorable character, wherever it is. */
export const dirtyText: fc.Arbitrary<string> = fc
  .tuple(outsideText({ maxLength: 20 }), fc.constantFrom(...UNSTORABLE), outsideText({ maxLength: 20 }))
  .map(([before, bad, after]) => before + bad + after)
  .filter((text) => !isCleanText(text));

/** Any JSON value whose strings (and property names) are outside text. */
export function outsideJson(maxDepth = 4): fc.Arbitrary<unknown> {
  return fc.jsonValue({ maxDepth, stringUnit: outsideUnit });
}

/** `leaf` inside `depth` levels of arrays and objects, alternating: `[{"a":[{"a":leaf}]}]`. */
export function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

/** JSON text of `leaf` inside `depth` levels, built without JSON.stringify (which gives up near 5,000 levels). */
export function nestedJsonText(depth: number, leafJson: string): string {
  const open: string[] = [];
  const close: string[] = [];
  for (let i = 0; i < depth; i++) {
    open.push(i % 2 === 0 ? '{"a":' : '[');
    close.push(i % 2 === 0 ? '}' : ']');
  }
  return open.join('') + leafJson + close.reverse().join('');
}

/** Every string in a value (property names included), with its path and depth; walked without recursion. */
export function* stringsIn(value: unknown): Generator<{ path: string; depth: number; text: string }> {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path: '$', depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    // A path thousands of levels long would drown the failure message: its start and end say enough.
    const at = path.length > 160 ? `${path.slice(0, 60)}…${path.slice(-60)}` : path;
    if (typeof current === 'string') {
      yield { path: at, depth, text: current };
    } else if (Array.isArray(current)) {
      current.forEach((item, i) => stack.push({ value: item, path: `${at}[${i}]`, depth: depth + 1 }));
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, item] of Object.entries(current)) {
        yield { path: `${at} (a name)`, depth, text: key };
        stack.push({ value: item, path: `${at}.${key}`, depth: depth + 1 });
      }
    }
  }
}

/** Fails naming the first string of `value` that still holds U+0000 or a lone surrogate. */
export function expectAllClean(value: unknown): void {
  for (const { path, depth, text } of stringsIn(value)) {
    if (!isCleanText(text)) expect.fail(`${path} (${depth} levels down) holds U+0000 or a lone surrogate: ${JSON.stringify(text.slice(0, 80))}`);
  }
}
