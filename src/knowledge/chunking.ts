/**
 * How a synced page or product becomes searchable chunks, and which text-search configuration indexes them.
 *
 * A chunk holds about 120–250 words: long enough to carry an answer with its context, short enough that the AI gets
 * a few focused passages instead of whole pages. Paragraphs are kept whole where they fit; a paragraph that does not
 * fit is cut between sentences, and only then the next chunk repeats the last words before the cut (the overlap), so
 * the sentence around a cut is found whole in at least one chunk. A product is one short text: its title, its facts
 * (price, availability, SKU) and its description, so a question about the price finds the product itself.
 */
import type { Availability } from '../../db/schema.ts';
import { CHUNK_MAX_WORDS, CHUNK_MIN_WORDS, CHUNK_OVERLAP_WORDS } from './limits.ts';
import { normaliseParagraphs } from './text.ts';

/** PostgreSQL text-search configurations we index and query with; anything but these languages uses `simple`. */
export type SearchConfig = 'dutch' | 'english' | 'german' | 'french' | 'simple';

const SEARCH_CONFIGS: Readonly<Record<string, SearchConfig>> = { nl: 'dutch', en: 'english', de: 'german', fr: 'french' };

/**
 * The configuration for a primary language subtag (nl → dutch, en → english, de → german, fr → french; otherwise
 * simple: no stemming). Each is a Snowball stemmer that PostgreSQL ships, so PGlite has them too.
 */
export function searchConfigFor(language: string | null): SearchConfig {
  return (language && SEARCH_CONFIGS[language]) || 'simple';
}

export interface ChunkOptions {
  minWords?: number;
  maxWords?: number;
  overlapWords?: number;
}

interface Piece {
  text: string;
  words: number;
  /** What joins it to the piece before it in the same paragraph. */
  joiner: ' ' | '\n';
}

/** Splits plain text (paragraphs separated by blank lines) into chunk texts; empty text gives no chunks. */
export function chunkText(text: string, options: ChunkOptions = {}): string[] {
  const minWords = options.minWords ?? CHUNK_MIN_WORDS;
  const maxWords = options.maxWords ?? CHUNK_MAX_WORDS;
  const overlapWords = options.overlapWords ?? CHUNK_OVERLAP_WORDS;
  const paragraphs = normaliseParagraphs(text)
    .split('\n\n')
    .filter(Boolean)
    .map((p) => piecesOf(p, maxWords));

  const chunks: string[] = [];
  /** Paragraphs of the chunk being filled; each a list of pieces. */
  let current: Piece[][] = [];
  let currentWords = 0;
  let overlap = '';

  const flush = (cutInsideParagraph: boolean) => {
    if (currentWords === 0) return;
    const body = current.filter((p) => p.length > 0).map(joinPieces).join('\n\n');
    chunks.push(overlap ? `${overlap} ${body}` : body);
    overlap = cutInsideParagraph ? tailWords(current.at(-1)!, overlapWords) : '';
    current = [];
    currentWords = 0;
  };

  for (const pieces of paragraphs) {
    const words = pieces.reduce((sum, p) => sum + p.words, 0);
    if (currentWords + words <= maxWords) {
      current.push(pieces);
      currentWords += words;
      continue;
    }
    if (currentWords >= minWords) flush(false);
    if (currentWords + words <= maxWords) {
      current.push(pieces);
      currentWords += words;
      continue;
    }
    // The paragraph does not fit: fill up sentence by sentence, cutting inside the paragraph.
    let paragraph: Piece[] = [];
    current.push(paragraph);
    for (const piece of pieces) {
      if (currentWords > 0 && currentWords + piece.words > maxWords) {
        flush(paragraph.length > 0);
        paragraph = [];
        current.push(paragraph);
      }
      paragraph.push(paragraph.length ? piece : { ...piece, joiner: ' ' });
      currentWords += piece.words;
    }
  }
  flush(false);
  return chunks;
}

/** A paragraph's lines, each cut into sentences, and sentences longer than a chunk cut into word runs. */
function piecesOf(paragraph: string, maxWords: number): Piece[] {
  const pieces: Piece[] = [];
  for (const [lineIndex, line] of paragraph.split('\n').entries()) {
    for (const [sentenceIndex, sentence] of line.split(/(?<=[.!?…:;])\s+/).entries()) {
      const words = sentence.split(/\s+/).filter(Boolean);
      for (let start = 0; start < words.length; start += maxWords) {
        const part = words.slice(start, start + maxWords);
        pieces.push({ text: part.join(' '), words: part.length, joiner: lineIndex > 0 && sentenceIndex === 0 && start === 0 ? '\n' : ' ' });
      }
    }
  }
  return pieces;
}

function joinPieces(pieces: Piece[]): string {
  return pieces.map((p, i) => (i === 0 ? p.text : p.joiner + p.text)).join('');
}

/** The last whole sentences within `limit` words, or the last `limit` words when the last sentence is longer. */
function tailWords(pieces: Piece[], limit: number): string {
  const taken: Piece[] = [];
  let words = 0;
  for (let i = pieces.length - 1; i >= 0 && words + pieces[i]!.words <= limit; i--) {
    taken.unshift(pieces[i]!);
    words += pieces[i]!.words;
  }
  if (taken.length) return taken.map((p) => p.text).join(' ');
  return pieces.at(-1)?.text.split(/\s+/).slice(-limit).join(' ') ?? '';
}

export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

export interface ProductFacts {
  title: string;
  description: string;
  /** Decimal string or number; null when unknown. */
  price: string | number | null;
  currency: string | null;
  sku: string | null;
  availability: Availability | null;
  language: string | null;
}

const LABELS = {
  nl: {
    price: 'Prijs',
    sku: 'Artikelnummer',
    availability: { in_stock: 'Op voorraad', out_of_stock: 'Niet op voorraad', preorder: 'Te reserveren (pre-order)', backorder: 'In nabestelling', discontinued: 'Uit het assortiment' },
  },
  en: {
    price: 'Price',
    sku: 'SKU',
    availability: { in_stock: 'In stock', out_of_stock: 'Out of stock', preorder: 'Available for pre-order', backorder: 'On backorder', discontinued: 'Discontinued' },
  },
} as const;

/** "Title. Price: € 749,00. In stock. SKU: X." then the description: the text a product is indexed and shown as. */
export function productText(product: ProductFacts): string {
  const lang = product.language === 'nl' ? 'nl' : 'en';
  const labels = LABELS[lang];
  const facts: string[] = [];
  if (product.price !== null) facts.push(`${labels.price}: ${formatPrice(Number(product.price), product.currency, lang)}.`);
  if (product.availability) facts.push(`${labels.availability[product.availability]}.`);
  if (product.sku) facts.push(`${labels.sku}: ${product.sku}.`);
  const head = [`${product.title.replace(/[.!?]+$/, '')}.`, ...facts].join(' ');
  const description = normaliseParagraphs(product.description);
  return description ? `${head}\n\n${description}` : head;
}

function formatPrice(price: number, currency: string | null, lang: 'nl' | 'en'): string {
  const locale = lang === 'nl' ? 'nl-NL' : 'en-GB';
  if (!currency) return price.toLocaleString(locale, { minimumFractionDigits: 2, maximumFractionDigits: 4 });
  try {
    // Plain spaces: the text is shown and spoken, and a no-break space is no help there.
    return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(price).replace(/[\u00a0\u202f]/g, ' ');
  } catch {
    return `${currency} ${price.toFixed(2)}`;
  }
}
