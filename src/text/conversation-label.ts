/**
 * How a conversation is named where it is listed or linked (docs/interfaces.md, "Going live"): by its customer's name,
 * else their email or number, else the first words of the customer's first message; never by a number in a list. Plain
 * text: whoever shows it inserts it as text, never as markup (it is the customer's own words).
 */
import { cutToChars } from './cut.ts';

/** The first words of a message are cut at a word boundary near this many characters, with "…". */
export const LABEL_WORDS_CHARS = 40;

/** What a conversation's name is made of (db/repositories/conversation-labels.repository.ts reads them). */
export interface ConversationLabelFacts {
  channel: 'phone' | 'whatsapp' | 'webchat';
  customer_name: string | null;
  customer_email: string | null;
  customer_phone: string | null;
  /** The customer's first message (its start), null when they said nothing yet. */
  first_words: string | null;
}

/** Said of a conversation whose customer has no name, email or number and wrote nothing yet. */
const NO_WORDS_YET = { phone: 'A call with no words yet', whatsapp: 'A WhatsApp chat with no message yet', webchat: 'A website chat with no message yet' } as const;

/** The start of `text` on one line: whole when short, else cut at a word boundary near `max` characters, with "…". */
export function firstWords(text: string, max = LABEL_WORDS_CHARS): string {
  const line = text.replace(/\s+/gu, ' ').trim();
  const chars = Array.from(line);
  if (chars.length <= max) return line;
  let cut = cutToChars(line, max);
  // Cut inside a word: back to the last space, unless that leaves less than half (one long word, or a script
  // without spaces between words).
  if (chars[Array.from(cut).length] !== ' ') {
    const space = cut.lastIndexOf(' ');
    if (space >= cut.length / 2) cut = cut.slice(0, space);
  }
  return `${cut.replace(/[\s\p{P}]+$/u, '')}…`;
}

export function conversationLabel(facts: ConversationLabelFacts): string {
  const named = [facts.customer_name, facts.customer_email, facts.customer_phone].map((v) => v?.trim()).find((v) => v);
  if (named) return named;
  const words = facts.first_words ? firstWords(facts.first_words) : '';
  return words || NO_WORDS_YET[facts.channel];
}
