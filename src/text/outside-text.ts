/**
 * The one rule for text that comes from outside (docs/reliability.md, "Outside text"): every string a customer, an
 * integrator, Meta, Twilio, a bridge, an LLM or a dashboard user sends us is made storable and sendable at the edge
 * where it enters, before anything keeps it:
 *
 * - U+0000 becomes U+FFFD. PostgreSQL `text` and `jsonb` cannot hold U+0000; one would make the write of the whole
 *   batch it is in fail, again at every retry.
 * - A lone surrogate (half of a UTF-16 pair, which JSON `\ud800` escapes can carry) becomes U+FFFD. PostgreSQL's
 *   `jsonb` refuses it, and it is not valid UTF-8 for anyone we send it to.
 *
 * Nothing else changes: other control characters, bidi marks and emoji pass as sent, because they are storable and
 * a customer's text must reach the integrator as it was written. Replacing (rather than refusing) is deliberate: a
 * WhatsApp message or a phone prompt has already been acknowledged when we read it, and must still be answered.
 *
 * Each input kind applies the rule once, where it is parsed: the JSON API bodies, query strings and path parameters
 * (src/http/app.ts), Twilio's form bodies (same), Meta's webhook payload (src/channels/whatsapp/payload.ts),
 * ConversationRelay frames (src/channels/phone/frames.ts), the integrator's channel responses, manifests and tool
 * results (src/botlink), and the LLM's answers (src/ai).
 */

/** The character that takes the place of what cannot be kept. */
export const REPLACEMENT_CHARACTER = '\uFFFD';

/** U+0000 or a surrogate (a well-formed pair is put back below). */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this rule is about.
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

/** `text` with U+0000 and lone surrogates replaced by U+FFFD; the same string when it holds neither (the usual case). */
export function cleanText(text: string): string {
  if (!SUSPECT.test(text)) return text;
  return text.toWellFormed().replaceAll('\u0000', REPLACEMENT_CHARACTER);
}

/** True when `text` holds nothing that {@link cleanText} would replace. */
export function isCleanText(text: string): boolean {
  return !SUSPECT.test(text) || (text.isWellFormed() && !text.includes('\u0000'));
}

/**
 * A parsed JSON value with {@link cleanText} applied to every string in it, property names included, at any depth
 * (JSON.parse reads values nested 100,000 levels deep, so the walk keeps its own stack instead of recursing). Returns
 * the same value (not a copy) when nothing needed cleaning, so the common case allocates nothing but the walk.
 */
export function cleanJson<T>(value: T): T {
  if (typeof value === 'string') return cleanText(value) as T;
  if (typeof value !== 'object' || value === null) return value;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const item: unknown = node[i];
        if (typeof item === 'string') {
          const cleaned = cleanText(item);
          if (cleaned !== item) node[i] = cleaned;
        } else if (typeof item === 'object' && item !== null) stack.push(item);
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const item = record[key];
      let cleaned = item;
      if (typeof item === 'string') cleaned = cleanText(item);
      else if (typeof item === 'object' && item !== null) stack.push(item);
      const cleanKey = cleanText(key);
      if (cleanKey !== key) {
        delete record[key];
        // A cleaned name may meet an existing one ("a\u0000" and "a\uFFFD"); the value read later wins, as JSON.parse does.
        setOwn(record, cleanKey, cleaned);
      } else if (cleaned !== item) {
        setOwn(record, key, cleaned);
      }
    }
  }
  return value;
}

/** Assignment that never reaches a setter: JSON.parse makes `__proto__` an own property, and it must stay one. */
function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
}
