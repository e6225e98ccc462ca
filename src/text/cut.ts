/** Cutting text to a number of characters without splitting one: the spec's limits count characters, not bytes. */

const graphemes = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter('und', { granularity: 'grapheme' }) : null;

/**
 * `text` cut to at most `max` characters, where a character is a Unicode code point (what the spec's "characters"
 * can mean across languages: an emoji is one, not two UTF-16 units). A surrogate pair is never split, and the cut is
 * made at a grapheme boundary (an emoji with a skin tone or a letter with its accent stays whole or goes whole),
 * except when a single grapheme is itself longer than the room left: then it is cut by code points rather than
 * dropped entirely. Lone surrogates are replaced by U+FFFD so the text encodes to valid UTF-8.
 */
export function cutToChars(text: string, max: number): string {
  const wellFormed = text.toWellFormed();
  // Fast path: no more UTF-16 units than the limit means no more code points either.
  if (wellFormed.length <= max) return wellFormed;
  const codePoints = Array.from(wellFormed);
  if (codePoints.length <= max) return wellFormed;
  if (graphemes === null) return codePoints.slice(0, max).join('');
  let out = '';
  let used = 0;
  for (const { segment } of graphemes.segment(wellFormed)) {
    const size = Array.from(segment).length;
    if (used + size > max) {
      if (size > max) out += Array.from(segment).slice(0, max - used).join('');
      break;
    }
    out += segment;
    used += size;
  }
  return out;
}
