/**
 * The language a customer writes in, detected from their words (WhatsApp and website chat carry no language tag; the
 * phone's bridge says which language it heard). tinyld is a maintained n-gram detector trained on short texts: it
 * tells "Waar is mijn bestelling?" from "Where is my order?" in about 40 µs. Texts too short or too mixed to tell
 * ("ok", "Hallo", an order number) give null, and the conversation keeps the language it had.
 */
import { detectAll } from 'tinyld';

/** The detector's share for its best guess below which the text is taken as undecided. */
export const MIN_DETECTION_ACCURACY = 0.5;
/** Only the start of a long message is looked at: it says as much, for a bounded cost. */
const DETECTION_SAMPLE_CHARS = 400;

/** The two-letter code of the language `text` is written in, or null when it cannot be told with confidence. */
export function detectLanguage(text: string): string | null {
  const sample = text.slice(0, DETECTION_SAMPLE_CHARS).trim();
  if (sample === '') return null;
  const [best] = detectAll(sample);
  if (!best || best.accuracy < MIN_DETECTION_ACCURACY || !/^[a-z]{2}$/.test(best.lang)) return null;
  return best.lang;
}
