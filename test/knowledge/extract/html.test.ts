import { describe, expect, it } from 'vitest';
import { extractHtml } from '../../../src/knowledge/extract/index.ts';

const page = `<!doctype html><html lang="en-GB"><head><title>Returns | Shoe Shop</title>
<style>.x{color:red}</style><script>var tracking = "do not read";</script></head><body>
<header class="site-header"><a href="/">Shoe Shop</a><nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/contact">Contact</a></nav></header>
<div id="cookie-banner" class="banner">We use cookies to improve your experience. <button>Accept all</button> <a href="/cookies">Cookie settings</a></div>
<main><article>
<h1>Returns</h1>
<p>You can return any item within 30 days of delivery. Send it back in its original box, with the packing slip, and we
refund the price within five working days.</p>
<h2>What cannot be returned</h2>
<p>Shoes that have been worn outside cannot be returned. Socks and gift cards cannot be returned either, for reasons
of hygiene and because a gift card is money.</p>
<ul><li>Gift cards</li><li>Worn socks</li></ul>
<h3>Exchanges</h3>
<p>An exchange for another size is free within Europe: order the new size and return the old pair.</p>
</article></main>
<aside><h2>Popular products</h2><p>Running shoes from € 49</p></aside>
<form><label>Newsletter <input name="email"></label><button>Subscribe</button></form>
<footer><p>© 2026 Shoe Shop · Keizersgracht 1, Amsterdam · <a href="/privacy">Privacy</a></p></footer>
</body></html>`;

describe('a web page becomes its article text', () => {
  const extracted = extractHtml(page, 'https://shoes.example/returns');

  it('keeps the article, with each heading a paragraph of its own', () => {
    const paragraphs = extracted.text.split('\n\n');
    expect(paragraphs).toContain('What cannot be returned');
    expect(paragraphs).toContain('Exchanges');
    expect(paragraphs).toContain('Shoes that have been worn outside cannot be returned. Socks and gift cards cannot be returned either, for reasons of hygiene and because a gift card is money.');
    expect(paragraphs).toContain('Gift cards');
    expect(paragraphs).toContain('Worn socks');
    expect(extracted.text).toMatch(/^You can return any item within 30 days of delivery\./);
  });

  it('drops the navigation, the cookie banner, the aside, the form, the footer and scripts', () => {
    for (const gone of ['Home', 'Contact', 'cookies', 'Accept all', 'Popular products', 'Newsletter', 'Subscribe', 'Keizersgracht', 'Privacy', 'tracking', 'color']) {
      expect(extracted.text).not.toContain(gone);
    }
  });

  it('takes the page heading as its title, not the site name, and does not repeat it in the text', () => {
    expect(extracted.title).toBe('Returns');
    expect(extracted.text.split('\n\n')).not.toContain('Returns');
  });

  it('says the language the page declares, as a two-letter code', () => {
    expect(extracted.language).toBe('en');
    expect(extractHtml('<html><body><p>Hallo</p></body></html>', 'https://x.example/').language).toBeNull();
  });

  it('takes the body text when Readability finds no article, and titles the page by its address when it has no title', () => {
    const bare = extractHtml('<html><body><div>Open Monday to Friday, 9 to 5.</div><div>Closed on Sundays.</div></body></html>', 'https://shop.example/hours');
    expect(bare.text).toBe('Open Monday to Friday, 9 to 5.\n\nClosed on Sundays.');
    expect(bare.title).toBe('shop.example/hours');
  });

  it('keeps a FAQ accordion: questions in buttons, answers hidden until opened', () => {
    const faq = extractHtml(
      '<html><body><main><h1>FAQ</h1><h3><button aria-expanded="false">Can I return worn shoes?</button></h3>' +
        '<div hidden><p>Shoes that have been worn outside cannot be returned.</p></div></main></body></html>',
      'https://shop.example/faq',
    );
    expect(faq.text).toBe('Can I return worn shoes?\n\nShoes that have been worn outside cannot be returned.');
  });

  it('reads a fragment without <html> and <body>', () => {
    expect(extractHtml('<h2>Payment</h2><p>We take iDEAL, cards and PayPal.</p>', 'https://shop.example/pay').text).toBe('Payment\n\nWe take iDEAL, cards and PayPal.');
  });

  it('keeps an article whose wrapper only mentions cookies in its class', () => {
    const wrapped = extractHtml('<html><body class="cookie-consent-open"><div class="layout has-cookie-bar"><article><h1>Shipping</h1><p>We ship with DHL and PostNL to every country of the European Union.</p></article></div></body></html>', 'https://shop.example/shipping');
    expect(wrapped.text).toContain('We ship with DHL and PostNL');
  });

  it('reads a page of more elements than Readability scores from its body, and bounds the work', () => {
    const rows = Array.from({ length: 25_000 }, (_v, i) => `<span>item ${i}</span>`).join('');
    const huge = extractHtml(`<html><body><p>Catalogue of all our parts.</p>${rows}</body></html>`, 'https://shop.example/all');
    expect(huge.text).toMatch(/^Catalogue of all our parts\./);
    expect(huge.text).toContain('item 24999');
  });
});
