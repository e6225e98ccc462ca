/**
 * Text as the knowledge base keeps it: NFC, no control characters (PostgreSQL text refuses NUL), and HTML from a
 * content-management plugin turned into plain text with paragraph breaks.
 *
 * The HTML conversion is a small linear scanner, not a parser: it only needs the visible words and where blocks
 * end. It never runs a regular expression that can backtrack over the whole input (bodies are up to 200 KB), it drops
 * script, style and similar elements with their content, and it never produces markup: its output is plain text.
 */

/** What the knowledge base keeps of synced text: NFC, \r\n → \n, tabs → spaces, no control characters but newline. */
export function normaliseText(text: string): string {
  return (
    text
      .normalize('NFC')
      .replace(/\r\n?/g, '\n')
      .replace(/\t/g, ' ')
      // eslint-disable-next-line no-control-regex -- removing control characters is the point
      .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\ufffe\uffff]/g, '')
  );
}

/**
 * A JSON Schema pattern (`u` flag) for text that keeps something after {@link cleanLine}: at least one character that
 * is neither white space nor a control character it removes. test/http/openapi-fuzz.test.ts checks the two agree.
 */
export const VISIBLE_TEXT_PATTERN = String.raw`[^\s\u0000-\u001f\u007f-\u009f\ufffe\uffff]`;

/** One line: whitespace runs collapsed, trimmed (titles, SKUs). */
export function cleanLine(text: string): string {
  return normaliseText(text).replace(/\s+/g, ' ').trim();
}

/** Paragraphs separated by one blank line, spaces inside lines collapsed, no blank lines at the ends. */
export function normaliseParagraphs(text: string): string {
  return normaliseText(text)
    .split(/\n[ \u00a0]*\n\s*/)
    .map((paragraph) =>
      paragraph
        .split('\n')
        .map((line) => line.replace(/[ \u00a0]+/g, ' ').trim())
        .filter(Boolean)
        .join('\n'),
    )
    .filter(Boolean)
    .join('\n\n');
}

/** Elements whose content is not visible text. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'head', 'select', 'canvas']);
/** Elements that end a paragraph. */
const PARAGRAPH = new Set([
  'p', 'div', 'section', 'article', 'main', 'header', 'footer', 'aside', 'nav', 'blockquote', 'pre', 'figure',
  'figcaption', 'table', 'form', 'fieldset', 'address', 'details', 'summary', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'ul', 'ol', 'dl', 'hr', 'body', 'html',
]);
/** Elements that end a line. */
const LINE = new Set(['br', 'li', 'tr', 'dt', 'dd', 'caption', 'option']);

/** Visible text of an HTML fragment or document, with a blank line between blocks and list items on their own lines. */
export function htmlToText(html: string): string {
  const lower = html.toLowerCase();
  const out: string[] = [];
  // In HTML, a newline in the source is only a space; line and paragraph breaks come from the elements.
  const text = (s: string) => s.replace(/\s+/g, ' ');
  const n = html.length;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      out.push(text(html.slice(i)));
      break;
    }
    out.push(text(html.slice(i, lt)));
    if (html.startsWith('<!--', lt)) {
      const end = html.indexOf('-->', lt + 4);
      i = end < 0 ? n : end + 3;
      continue;
    }
    const gt = html.indexOf('>', lt + 1);
    // No '>' anywhere after: every remaining '<' is text.
    if (gt < 0) {
      out.push(text(html.slice(lt)));
      break;
    }
    const match = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/.exec(html.slice(lt, Math.min(gt, lt + 40)));
    if (!match) {
      // '<!doctype …>', '<?xml …?>' are dropped; a lone '<' as in "a < b" stays text.
      if (html[lt + 1] === '!' || html[lt + 1] === '?') i = gt + 1;
      else {
        out.push('<');
        i = lt + 1;
      }
      continue;
    }
    const closing = match[1] === '/';
    const name = match[2]!.toLowerCase();
    i = gt + 1;
    if (!closing && SKIPPED.has(name) && html[gt - 1] !== '/') {
      const close = lower.indexOf(`</${name}`, i);
      if (close < 0) break;
      const closeEnd = html.indexOf('>', close);
      i = closeEnd < 0 ? n : closeEnd + 1;
      continue;
    }
    if (PARAGRAPH.has(name)) out.push('\n\n');
    else if (LINE.has(name) && !closing) out.push(name === 'li' ? '\n- ' : '\n');
    else if (name === 'td' || name === 'th') out.push(' ');
  }
  return normaliseParagraphs(decodeEntities(out.join('')));
}

/** Named entities that content-management HTML actually uses (Latin-1 letters of nl, en, de, fr and punctuation). */
const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', shy: '', euro: '€', pound: '£', cent: '¢', yen: '¥',
  copy: '©', reg: '®', trade: '™', deg: '°', times: '×', divide: '÷', plusmn: '±', middot: '·', bull: '•', hellip: '…',
  ndash: '–', mdash: '—', lsquo: '‘', rsquo: '’', sbquo: '‚', ldquo: '“', rdquo: '”', bdquo: '„', laquo: '«', raquo: '»',
  sect: '§', para: '¶', frac12: '½', frac14: '¼', frac34: '¾', sup2: '²', sup3: '³', iexcl: '¡', iquest: '¿', szlig: 'ß',
  aelig: 'æ', AElig: 'Æ', oslash: 'ø', Oslash: 'Ø', aring: 'å', Aring: 'Å', ccedil: 'ç', Ccedil: 'Ç', ntilde: 'ñ',
  Ntilde: 'Ñ', oelig: 'œ', OElig: 'Œ',
};
const ACCENTS: Record<string, string> = { acute: '\u0301', grave: '\u0300', circ: '\u0302', uml: '\u0308', tilde: '\u0303' };

function decodeEntities(text: string): string {
  return text.replace(/&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});/g, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      return valid ? String.fromCodePoint(code) : '\ufffd';
    }
    const named = NAMED[body];
    if (named !== undefined) return named;
    // &eacute; &Euml; &ocirc; …: a vowel (or y, n) plus an accent name, composed by NFC later.
    const accented = /^([aeiouyAEIOUYnN])(acute|grave|circ|uml|tilde)$/.exec(body);
    return accented ? (accented[1]! + ACCENTS[accented[2]!]!).normalize('NFC') : whole;
  });
}

