/**
 * Rendering a reply for the channel it goes out on. Replies come from a language model, the knowledge base or the
 * integrator (protocol §2.2: "On the phone it is converted to spoken language, so avoid long lists and links"), and any
 * of them may contain markdown, links and lists.
 *
 * - Speech: what a text-to-speech voice can say well. Markdown goes, links become "our website", email addresses are
 *   spelled the way people say them, prices and ISO dates are written out, long lists are shortened and the whole is
 *   cut to a spoken length at a sentence boundary.
 * - Text (WhatsApp, website chat): links stay, markdown is turned into WhatsApp's own formatting (or plain text for
 *   the website chat), and the text is cut to the channel's limit.
 *
 * Words are in the customer's language where the service has them (nl, en) and English otherwise.
 */
import type { Channel } from '../channels-and-handoffs.ts';
import {
  MAX_SPOKEN_CHARS,
  MAX_SPOKEN_LIST_ITEMS,
  MAX_WEBCHAT_TEXT_CHARS,
  MAX_WHATSAPP_TEXT_CHARS,
} from './limits.ts';
import { primaryLanguage } from '../text/language.ts';
import { FALLBACK_PHRASE_LANGUAGE, sentenceSegmenter } from './phrases.ts';

interface SpeechWords {
  and: string;
  andMore: string;
  /** A URL after a word that takes an object ("visit", "on", "via"). */
  ourWebsite: string;
  /** A URL anywhere else. */
  onOurWebsite: string;
  emailAt: string;
  emailDot: string;
  /** Ranges: "9:00 to 17:00", "3 to 5 days". */
  to: string;
  /** A date with a time: "22 November 2026 at 14:30". */
  atTime: string;
  currency: Record<'EUR' | 'USD' | 'GBP', { one: string; many: string; minor: string; minors: string }>;
}

const speechWords: Record<string, SpeechWords> = {
  en: {
    and: 'and',
    andMore: 'and more',
    ourWebsite: 'our website',
    onOurWebsite: 'on our website',
    emailAt: 'at',
    emailDot: 'dot',
    to: 'to',
    atTime: 'at',
    currency: {
      EUR: { one: 'euro', many: 'euro', minor: 'cent', minors: 'cents' },
      USD: { one: 'dollar', many: 'dollars', minor: 'cent', minors: 'cents' },
      GBP: { one: 'pound', many: 'pounds', minor: 'penny', minors: 'pence' },
    },
  },
  nl: {
    and: 'en',
    andMore: 'en meer',
    ourWebsite: 'onze website',
    onOurWebsite: 'op onze website',
    emailAt: 'apenstaartje',
    emailDot: 'punt',
    to: 'tot',
    atTime: 'om',
    currency: {
      EUR: { one: 'euro', many: 'euro', minor: 'cent', minors: 'cent' },
      USD: { one: 'dollar', many: 'dollar', minor: 'cent', minors: 'cent' },
      GBP: { one: 'pond', many: 'pond', minor: 'penny', minors: 'pence' },
    },
  },
};

function wordsFor(language: string): SpeechWords {
  return speechWords[primaryLanguage(language)] ?? speechWords[FALLBACK_PHRASE_LANGUAGE]!;
}

/** Words after which a URL reads as "our website" rather than "on our website". */
const takesObject = new Set([
  'on', 'at', 'via', 'visit', 'see', 'check', 'to', 'from', 'through', 'op', 'bij', 'bezoek', 'zie', 'naar', 'van',
  'door', 'raadpleeg',
]);

const urlPattern = /\b(?:https?:\/\/|www\.)[^\s<>()[\]"']+/gi;
const emailPattern = /\b[\p{L}\p{N}._%+-]+@[\p{L}\p{N}.-]+\.\p{L}{2,}\b/gu;
/** Trailing characters that end a sentence rather than a URL. */
const urlTrailing = /[.,;:!?'"]+$/;

// ── Shared markdown handling ────────────────────────────────────────────────────────────────────────────────────

function normaliseNewlines(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/?(?:p|div|li|ul|ol|h[1-6])\b[^>]*>/gi, '\n')
    .replace(/<\/?(?:a|b|i|u|s|em|strong|span|small|code|pre|table|thead|tbody|tr|td|th)\b[^>]*>/gi, '');
}

const headingLine = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const bulletLine = /^\s*(?:[-*+•]|\d{1,3}[.)])\s+(.*)$/;
const ruleLine = /^\s*([-*_])(?:\s*\1){2,}\s*$/;
const tableSeparator = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

/** Removes emphasis markers, keeping the text: **x**, __x__, *x*, _x_, ~~x~~ (not the _ inside snake_case). */
function stripEmphasis(text: string): string {
  return text
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, '$1')
    .replace(/__(?=\S)(.+?)(?<=\S)__/g, '$1')
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '$1')
    .replace(/(?<![\p{L}\p{N}*])\*(?=\S)(.+?)(?<=\S)\*(?![\p{L}\p{N}*])/gu, '$1')
    .replace(/(?<![\p{L}\p{N}_])_(?=\S)(.+?)(?<=\S)_(?![\p{L}\p{N}_])/gu, '$1');
}

// ── Speech ──────────────────────────────────────────────────────────────────────────────────────────────────────

function speakEmail(email: string, w: SpeechWords): string {
  const [local = '', domain = ''] = email.split('@');
  const dotted = (part: string) => part.split('.').filter((p) => p !== '').join(` ${w.emailDot} `);
  return `${dotted(local)} ${w.emailAt} ${dotted(domain)}`;
}

function replaceUrls(text: string, w: SpeechWords): string {
  return text.replace(urlPattern, (match: string, offset: number) => {
    const trailing = urlTrailing.exec(match)?.[0] ?? '';
    const before = /([\p{L}]+)[\s:]*$/u.exec(text.slice(Math.max(0, offset - 30), offset))?.[1]?.toLowerCase();
    const phrase = before !== undefined && takesObject.has(before) ? w.ourWebsite : w.onOurWebsite;
    return `${phrase}${trailing}`;
  });
}

/** "a, b and c"; more than MAX_SPOKEN_LIST_ITEMS: "a, b, c and more". */
export function speakList(items: readonly string[], language: string): string {
  const w = wordsFor(language);
  const clean = items.map((i) => i.trim().replace(/[.;,:]+$/u, '')).filter((i) => i !== '');
  if (clean.length === 0) return '';
  if (clean.length > MAX_SPOKEN_LIST_ITEMS) return `${clean.slice(0, MAX_SPOKEN_LIST_ITEMS).join(', ')} ${w.andMore}`;
  if (clean.length === 1) return clean[0]!;
  return `${clean.slice(0, -1).join(', ')} ${w.and} ${clean.at(-1)!}`;
}

const terminal = /[.!?…]$/u;

/** Lines → sentences: headings and paragraphs end with a period, lists are spoken as one sentence. */
function linesToSentences(text: string, language: string): string {
  type Block = { kind: 'text'; text: string } | { kind: 'list'; items: string[] } | { kind: 'break' };
  const blocks: Block[] = [];
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/^\s*>\s?/, '');
    if (line.trim() === '' || ruleLine.test(line)) {
      blocks.push({ kind: 'break' });
      continue;
    }
    if (tableSeparator.test(line) && line.includes('-') && line.includes('|')) continue;
    const heading = headingLine.exec(line);
    if (heading) {
      blocks.push({ kind: 'text', text: heading[1]! }, { kind: 'break' });
      continue;
    }
    const bullet = bulletLine.exec(line);
    if (bullet) {
      const last = blocks.at(-1);
      if (last?.kind === 'list') last.items.push(bullet[1]!);
      else blocks.push({ kind: 'list', items: [bullet[1]!] });
      continue;
    }
    const cells = line.trim().startsWith('|')
      ? line.split('|').map((c) => c.trim()).filter((c) => c !== '').join(', ')
      : line.trim();
    const last = blocks.at(-1);
    if (last?.kind === 'text') {
      // A single line break inside a paragraph: a new sentence when the next line starts like one.
      const startsSentence = /^[\p{Lu}\p{N}]/u.test(cells);
      last.text = !/[.!?…:;,]$/u.test(last.text) && startsSentence ? `${last.text}. ${cells}` : `${last.text} ${cells}`;
    } else blocks.push({ kind: 'text', text: cells });
  }

  let out = '';
  for (const [i, block] of blocks.entries()) {
    if (block.kind === 'break') continue;
    if (block.kind === 'list') {
      const spoken = speakList(block.items.map(stripEmphasis), language);
      if (spoken === '') continue;
      // A list introduced by "…:" continues that sentence; otherwise it is a sentence of its own.
      out = out.endsWith(':') ? `${out} ${spoken}.` : `${out} ${spoken.charAt(0).toUpperCase()}${spoken.slice(1)}.`;
      continue;
    }
    let sentence = block.text.trim();
    if (sentence === '') continue;
    const next = blocks.slice(i + 1).find((b) => b.kind !== 'break');
    if (!terminal.test(sentence) && !sentence.endsWith(':')) sentence += next?.kind === 'list' ? ':' : '.';
    out = `${out} ${sentence}`;
  }
  return out.trim();
}

const currencySymbols: Record<string, 'EUR' | 'USD' | 'GBP'> = {
  '€': 'EUR', eur: 'EUR', euro: 'EUR', euros: 'EUR', $: 'USD', usd: 'USD', '£': 'GBP', gbp: 'GBP',
};
// 1.250,00 · 1,250.00 · 12,50 · 12.50 · 12,- · 12
const amount = String.raw`(\d{1,3}(?:[.,]\d{3})+|\d+)(?:[.,](\d{1,2}|-{1,2}|—)(?!\d))?`;
const pricePrefix = new RegExp(String.raw`(€|\$|£|\b(?:EUR|USD|GBP)\b)\s?${amount}`, 'gi');
const priceSuffix = new RegExp(String.raw`\b${amount}\s?(€|\b(?:euros?|EUR)\b)`, 'gi');

function speakPrice(code: 'EUR' | 'USD' | 'GBP', whole: string, fraction: string | undefined, w: SpeechWords): string {
  const units = w.currency[code];
  const major = Number(whole.replace(/[.,]/g, ''));
  const minor = fraction !== undefined && /^\d+$/.test(fraction) ? Number(fraction.padEnd(2, '0')) : 0;
  const majorText = `${major} ${major === 1 ? units.one : units.many}`;
  if (minor === 0) return majorText;
  if (major === 0) return `${minor} ${minor === 1 ? units.minor : units.minors}`;
  return `${majorText} ${minor}`;
}

function speakPrices(text: string, w: SpeechWords): string {
  return text
    .replace(pricePrefix, (_m, symbol: string, whole: string, fraction: string | undefined) =>
      speakPrice(currencySymbols[symbol.toLowerCase()]!, whole, fraction, w),
    )
    .replace(priceSuffix, (_m, whole: string, fraction: string | undefined, symbol: string) =>
      speakPrice(currencySymbols[symbol.toLowerCase()]!, whole, fraction, w),
    );
}

const isoDate = /\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\d-])/g;

function monthName(month: number, language: string): string {
  const date = new Date(Date.UTC(2000, month - 1, 1));
  try {
    return new Intl.DateTimeFormat(primaryLanguage(language), { month: 'long', timeZone: 'UTC' }).format(date);
  } catch {
    return new Intl.DateTimeFormat('en', { month: 'long', timeZone: 'UTC' }).format(date);
  }
}

function speakDates(text: string, language: string, w: SpeechWords): string {
  return text.replace(isoDate, (match, y: string, m: string, d: string, hh: string | undefined, mm: string | undefined) => {
    const year = Number(y);
    const month = Number(m);
    const day = Number(d);
    const check = new Date(Date.UTC(year, month - 1, day));
    if (month < 1 || month > 12 || check.getUTCDate() !== day) return match;
    const date = `${day} ${monthName(month, language)} ${year}`;
    return hh !== undefined && mm !== undefined ? `${date} ${w.atTime} ${hh}:${mm}` : date;
  });
}

const rangeUnits =
  '(?:business |working )?(?:days?|weeks?|hours?|minutes?|months?|years?)|werkdagen|dagen|dag|weken|uur|minuten|maanden|jaar';

/** Built once: a RegExp made per reply was compiled again on every phone turn. */
const unitRange = new RegExp(String.raw`\b(\d+)\s?[-–]\s?(\d+)(?=\s+(?:${rangeUnits})\b)`, 'g');

function speakRanges(text: string, w: SpeechWords): string {
  return text
    .replace(/\b(\d{1,2}[:.]\d{2})\s?[-–—]\s?(\d{1,2}[:.]\d{2})\b/g, `$1 ${w.to} $2`)
    .replace(unitRange, `$1 ${w.to} $2`)
    .replace(/(\d)\s?–\s?(\d)/g, `$1 ${w.to} $2`);
}

/** Cut at the last sentence boundary within `max`; a first sentence that is itself too long is cut at a word. */
function cutAtSentence(text: string, max: number, language: string): string {
  if (text.length <= max) return text;
  let out = '';
  for (const { segment } of sentenceSegmenter(language).segment(text)) {
    if ((out + segment).trimEnd().length > max) break;
    out += segment;
  }
  out = out.trim();
  if (out !== '') return out;
  const room = text.slice(0, max - 1);
  const cut = Math.max(room.lastIndexOf(', '), room.lastIndexOf(' '));
  return `${(cut > max / 2 ? room.slice(0, cut) : room).replace(/[\s,;:]+$/u, '')}.`;
}

/**
 * A reply as a text-to-speech voice should say it (phone). Markdown is removed (bullets become one sentence: "a, b
 * and c", more than {@link MAX_SPOKEN_LIST_ITEMS} items "a, b, c and more"), URLs become "(on) our website", email
 * addresses "info at example dot com", prices "12 euro 50", ISO dates "22 November 2026"; the result is cut to
 * `maxChars` (default {@link MAX_SPOKEN_CHARS}) at a sentence boundary; a streamed reply passes what is left of it.
 */
export function renderForSpeech(text: string, language: string, maxChars: number = MAX_SPOKEN_CHARS): string {
  const w = wordsFor(language);
  let out = normaliseNewlines(text)
    // Code blocks and inline code: the text stays, the fences go.
    .replace(/```[^\n]*\n?/g, '')
    .replace(/`([^`]*)`/g, '$1')
    // Images and links: the words stay; a link whose label is its address is spoken as an address below.
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\(([^)\s]*)[^)]*\)/g, (_m, label: string, href: string) =>
      label.trim() === '' ? href : label,
    )
    .replace(/\bmailto:/gi, '');
  out = out.replace(emailPattern, (email) => speakEmail(email, w));
  out = replaceUrls(out, w);
  out = linesToSentences(out, language);
  out = stripEmphasis(out)
    .replace(/\*{2,}|_{2,}|~{2,}/g, '')
    // Emojis and the joiners and selectors around them: a voice reads them as names ("smiling face").
    .replace(/\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}]|\u200d|\ufe0f/gu, '');
  out = speakPrices(out, w);
  out = speakDates(out, language, w);
  out = speakRanges(out, w);
  out = out
    .replace(/\s&\s/g, ` ${w.and} `)
    .replace(/\s+/g, ' ')
    .replace(/\s+([.,!?;:…])/gu, '$1')
    .replace(/([.!?…])[.:;,]+/gu, '$1')
    .replace(/:\s*$/u, '.')
    .trim();
  if (out !== '' && !terminal.test(out)) out += '.';
  return cutAtSentence(out, maxChars, language);
}

// ── Text ────────────────────────────────────────────────────────────────────────────────────────────────────────

export type TextChannel = Exclude<Channel, 'phone'>;

/** Characters counted as Unicode code points (an emoji is one), as WhatsApp counts them. */
function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** Cut to `max` code points, at a paragraph, sentence or word boundary when one is near, with an ellipsis. */
function cutText(text: string, max: number): string {
  if (codePoints(text) <= max) return text;
  const room = Array.from(text).slice(0, max - 1).join('');
  const boundaries = [room.lastIndexOf('\n\n'), ...['. ', '! ', '? ', '\n'].map((b) => room.lastIndexOf(b) + 1)];
  let cut = Math.max(...boundaries);
  if (cut < room.length / 2) cut = room.lastIndexOf(' ');
  const kept = cut > room.length / 2 ? room.slice(0, cut) : room;
  return `${kept.trimEnd()}…`;
}

/**
 * A reply for a text channel. Links stay (a markdown link becomes "label (address)"), headings lose their #'s,
 * horizontal rules go, bullets become "- ", and blank lines are collapsed. WhatsApp: markdown bold `**x**` becomes
 * WhatsApp's `*x*`, italic `*x*` becomes `_x_`, strikethrough `~~x~~` becomes `~x~`, a heading becomes bold; the text
 * is cut to {@link MAX_WHATSAPP_TEXT_CHARS}. Website chat: emphasis is removed (plain text), cut to
 * {@link MAX_WEBCHAT_TEXT_CHARS}. Code spans and blocks are left as they are (WhatsApp shows them in monospace).
 */
export function renderForText(text: string, channel: TextChannel): string {
  const whatsapp = channel === 'whatsapp';
  // Code and addresses are set aside behind private-use markers so that no emphasis rule touches them (an _ or * in
  // a URL is not formatting); \uE001 marks bold that is already converted.
  const kept: string[] = [];
  const keep = (m: string) => `\uE000${kept.push(m) - 1}\uE002`;
  let out = normaliseNewlines(text)
    .replace(/```[\s\S]*?```|`[^`\n]+`/g, keep)
    .replace(/!\[([^\]]*)\]\(([^)\s]+)[^)]*\)/g, (_m, _alt: string, href: string) => keep(href))
    .replace(/\[([^\]]*)\]\(([^)\s]+)[^)]*\)/g, (_m, label: string, href: string) => {
      const l = label.trim();
      const address = href.replace(/^mailto:/i, '');
      return l === '' || l === href || l === address ? keep(address) : `${l} (${keep(address)})`;
    })
    .replace(urlPattern, keep);

  out = out
    .split('\n')
    .map((line) => {
      if (ruleLine.test(line)) return '';
      const heading = headingLine.exec(line);
      if (heading) {
        const title = stripEmphasis(heading[1]!);
        return whatsapp && title !== '' ? `\uE001${title}\uE001` : title;
      }
      return line.replace(/^(\s*)[*+•]\s+/, '$1- ').trimEnd();
    })
    .join('\n');

  if (whatsapp) {
    out = out
      .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, '\uE001$1\uE001')
      .replace(/__(?=\S)(.+?)(?<=\S)__/g, '\uE001$1\uE001')
      .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, '~$1~')
      .replace(/(?<![\p{L}\p{N}*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\p{L}\p{N}*])/gu, '_$1_')
      .replace(/\uE001/g, '*');
  } else {
    out = stripEmphasis(out).replace(/\uE001/g, '');
  }

  out = out
    .replace(/\uE000(\d+)\uE002/g, (_m, i: string) => kept[Number(i)] ?? '')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return cutText(out, whatsapp ? MAX_WHATSAPP_TEXT_CHARS : MAX_WEBCHAT_TEXT_CHARS);
}
