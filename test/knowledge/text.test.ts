import { describe, expect, it } from 'vitest';
import { cleanLine, normaliseText, htmlToText, normaliseParagraphs } from '../../src/knowledge/text.ts';
import { primaryLanguage } from '../../src/text/language.ts';

describe('HTML from a plugin becomes its visible text', () => {
  it('keeps paragraphs and list items apart, joins inline elements', () => {
    const html = `<h2>Verzending</h2>
      <p>Wij verzenden met <strong>PostNL</strong>
         en <a href="https://dhl.example">DHL</a>.</p>
      <ul><li>Nederland: € 4,95</li><li>België: € 7,95</li></ul>
      <p>Vragen?<br>Bel ons.</p>`;
    expect(htmlToText(html)).toBe('Verzending\n\nWij verzenden met PostNL en DHL.\n\n- Nederland: € 4,95\n- België: € 7,95\n\nVragen?\nBel ons.');
  });

  it('drops scripts, styles, comments and other invisible content with what is inside them', () => {
    const html = '<!doctype html><html><head><title>x</title><style>p{color:red}</style></head><body><!-- menu --><p>Zichtbaar</p>'
      + '<script>document.write("<p>onzichtbaar</p>")</script><SCRIPT type="x">ook niet</SCRIPT><noscript>nee</noscript><template><p>nee</p></template>'
      + '<svg><text>nee</text></svg><p>Ook zichtbaar</p></body></html>';
    expect(htmlToText(html)).toBe('Zichtbaar\n\nOok zichtbaar');
  });

  it('decodes entities: named, accented, decimal and hexadecimal; invalid code points become U+FFFD', () => {
    expect(htmlToText('<p>Caf&eacute; &amp; cr&egrave;me &euml; &ndash; &#8364;5 &#x263A; &nbsp;x &#0; &#xD800; &unknown; &lt;b&gt;</p>')).toBe(
      'Café & crème ë – €5 ☺ x \ufffd \ufffd &unknown; <b>',
    );
  });

  it('leaves a lone < as text and never outputs markup', () => {
    expect(htmlToText('<p>a < b and 3<4</p>')).toBe('a < b and 3<4');
    expect(htmlToText('prijs <50 euro')).toBe('prijs <50 euro');
  });

  it('an unclosed script swallows the rest, an unclosed tag is text', () => {
    expect(htmlToText('<p>voor</p><script>alert(1)')).toBe('voor');
    expect(htmlToText('<p>voor</p><p')).toBe('voor\n\n<p');
  });

  it('runs in linear time on hostile input (no backtracking over 200 KB)', () => {
    const inputs = ['<script>'.repeat(25_000), '<'.repeat(200_000), '<a '.repeat(60_000), '&#'.repeat(100_000), '<!--'.repeat(50_000)];
    for (const input of inputs) {
      const started = performance.now();
      htmlToText(input);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});

describe('text is cleaned before it is stored', () => {
  it('removes NUL and other control characters, keeps newlines, composes accents (NFC)', () => {
    expect(normaliseText('a\u0000b\u0007c\r\nd\te\u0308')).toBe('abc\nd ë');
  });
  it('a line is one line', () => {
    expect(cleanLine('  Retourneren \n en   ruilen ')).toBe('Retourneren en ruilen');
  });
  it('paragraphs are separated by one blank line, spaces collapsed', () => {
    expect(normaliseParagraphs('\n\n  eerste  regel\ntweede regel \n\n\n\n derde \n')).toBe('eerste regel\ntweede regel\n\nderde');
  });
});

describe('the language of a query or page', () => {
  it.each([
    ['nl', 'nl'],
    ['NL-be', 'nl'],
    ['en_GB', 'en'],
    ['nl_NL.UTF-8', 'nl'],
    ['nld', 'nld'],
    ['', ''],
    [null, ''],
    [undefined, ''],
    ['123', ''],
    ['*', ''],
  ])('%s → %s', (given, expected) => {
    expect(primaryLanguage(given)).toBe(expected);
  });
});
