/**
 * A web page's main text (docs/knowledge.md, "How text is read"): Mozilla's Readability, the reader view of Firefox,
 * over linkedom, a server-side DOM without a browser.
 *
 * Before Readability scores the page, what is never knowledge is removed: navigation, the page's header and footer,
 * asides, forms, scripts and styles, and cookie or consent banners (an id or class naming cookie, consent or GDPR).
 * Readability then keeps the article; when it finds none, the body's remaining text is taken. Headings become
 * paragraphs of their own, list items and table rows too, so the chunker keeps them apart.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { primaryLanguage } from '../../text/language.ts';
import { MAX_PAGE_BYTES } from '../limits.ts';
import { cleanLine, htmlToText } from '../text.ts';
import { withoutTitleLine } from './lines.ts';
import type { ExtractedText } from './types.ts';

/**
 * Elements Readability may score at most. A page with more is not an article a person wrote (a product grid, a
 * generated table), and scoring it takes seconds; its body's text is taken instead, one linear pass.
 */
const MAX_SCORED_ELEMENTS = 10_000;

/**
 * Elements whose content is never a page's knowledge. Hidden elements, buttons and dialogs stay: a FAQ accordion
 * keeps its questions in buttons and its answers hidden until they are opened.
 */
const DROPPED = 'script, style, noscript, template, iframe, object, svg, canvas, nav, aside, form, select, footer, [role=navigation], [role=contentinfo]';
/** Cookie and consent banners, by their id or class. */
const BANNER = /cookie|consent|gdpr/i;

type Doc = ReturnType<typeof parseHTML>['document'];
type El = NonNullable<Doc['documentElement']>;

/** A web page's main text: Readability on linkedom; headings kept as their own paragraphs; nav, footers, cookie banners dropped. */
export function extractHtml(html: string, url: string): ExtractedText {
  // MAX_PAGE_BYTES: a fetched page is cut there; characters are never fewer than bytes, so this only bounds the work.
  const source = html.length > MAX_PAGE_BYTES ? html.slice(0, MAX_PAGE_BYTES) : html;
  const document = parseDocument(source);
  const language = pageLanguage(document);
  const h1 = cleanLine(document.querySelector('h1')?.textContent ?? '');
  const documentTitle = document.title ?? '';
  removeBoilerplate(document);

  let article: ReturnType<Readability['parse']> = null;
  let text: string;
  // Counted here: linkedom's getElementsByTagName('*') is empty, so Readability's own maxElemsToParse never stops it.
  if (document.querySelectorAll('*').length > MAX_SCORED_ELEMENTS) {
    const root = document.body ?? document.documentElement;
    text = root ? paragraphsOfHtml(root.innerHTML) : '';
  } else {
    try {
      // Readability reads `document` only; linkedom's Document has what it uses, not the DOM lib's every member.
      const readable = document as unknown as ConstructorParameters<typeof Readability>[0];
      article = new Readability(readable, { charThreshold: 200 }).parse();
    } catch {
      // A page Readability cannot walk: the body's text below.
    }
    text = article?.content ? paragraphsOfHtml(article.content) : '';
  }
  const title = pageTitle(cleanLine(article?.title ?? documentTitle), h1, url);
  text = withoutTitleLine(text, title);
  // Nothing but the title: Readability empties the document it reads, so the body's text comes from a fresh parse.
  if (!/[\p{L}\p{N}]/u.test(text)) text = withoutTitleLine(htmlBodyText(source), title);
  return { title, text, language };
}

/**
 * The whole visible text of an HTML document or fragment, without Readability's scoring (a DOCX's HTML is all content),
 * boilerplate removed as for a page, in the paragraphs of {@link extractHtml}.
 */
export function htmlBodyText(html: string): string {
  const document = parseDocument(html);
  removeBoilerplate(document);
  const root = document.body ?? document.documentElement;
  return root ? paragraphsOfHtml(root.innerHTML) : '';
}

/** Paragraphs of plain text from HTML: each block, heading, list item and table row its own paragraph. */
export function paragraphsOfHtml(html: string): string {
  return htmlToText(html)
    .split(/\n+/)
    // A list item is a paragraph of its own now; its "- " marker (htmlToText's) would only be read out.
    .map((line) => line.replace(/^- /, '').trim())
    .filter((line) => /[\p{L}\p{N}]/u.test(line))
    .join('\n\n');
}

/** linkedom builds no <html> and <body> around a fragment (mammoth's output, a bare .html file): they are given. */
function parseDocument(html: string): Doc {
  return parseHTML(/<html[\s>]/i.test(html) ? html : `<!doctype html><html><body>${html}</body></html>`).document;
}

/** Drops what is never knowledge (see DROPPED, BANNER) and shows what is only hidden until a click. */
function removeBoilerplate(document: Doc): void {
  for (const element of [...document.querySelectorAll(DROPPED)]) element.remove();
  for (const element of [...document.querySelectorAll('header')]) {
    // The page's header (logo, menu) goes; an article's own header holds its heading and stays.
    if (!element.closest('article, main, [role=main]')) element.remove();
  }
  // What a click shows is text too (a FAQ's answers, a product's tabs): Readability would drop it as invisible, and
  // buttons (a FAQ's questions) with it.
  for (const element of [...document.querySelectorAll('[hidden], [aria-hidden]')]) {
    element.removeAttribute('hidden');
    element.removeAttribute('aria-hidden');
  }
  for (const button of [...document.querySelectorAll('button')]) {
    const span = document.createElement('span');
    span.textContent = button.textContent;
    button.replaceWith(span);
  }
  for (const element of [...document.querySelectorAll('[id], [class]')]) {
    if (!BANNER.test(`${element.getAttribute('id') ?? ''} ${element.getAttribute('class') ?? ''}`)) continue;
    if (element.isConnected && !isStructural(element)) element.remove();
  }
}

/** A wrapper of the page itself never counts as a banner, whatever its class says ("has-cookie-bar" on a layout div). */
function isStructural(element: El): boolean {
  const name = element.localName;
  if (name === 'html' || name === 'body' || name === 'main' || name === 'article') return true;
  return element.querySelector('main, article, h1') !== null;
}

/** The two-letter language the page says it is in (html lang, then Content-Language), or null. */
function pageLanguage(document: Doc): string | null {
  const tag =
    document.documentElement?.getAttribute('lang') ||
    document.querySelector('meta[http-equiv="content-language" i]')?.getAttribute('content') ||
    document.querySelector('meta[http-equiv="Content-Language"]')?.getAttribute('content') ||
    '';
  const primary = primaryLanguage(tag);
  return primary.length === 2 ? primary : null;
}

/**
 * The page's h1 when the document title is that h1 plus the site's name ("Returns | Shoe Shop"), else the title
 * Readability found, else the h1, else the page's address (host and path): a page always has a title.
 */
function pageTitle(readable: string, h1: string, url: string): string {
  if (h1 && readable.toLowerCase().includes(h1.toLowerCase())) return h1;
  if (readable) return readable;
  if (h1) return h1;
  try {
    const { protocol, host, pathname } = new URL(url);
    // A file's address says nothing: its caller titles it by its name.
    return protocol === 'http:' || protocol === 'https:' ? cleanLine(`${host}${pathname === '/' ? '' : pathname}`) : '';
  } catch {
    return '';
  }
}
