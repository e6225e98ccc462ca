/** The website chat's pure parts: the escalation phrases, the origin rules and the token bucket. */
import { describe, expect, it } from 'vitest';
import { canonicalOrigin, originFromPasted, parseAllowedOrigins } from '../../../src/channels/webchat/origins.ts';
import { AppError } from '../../../src/errors.ts';

describe('web origins', () => {
  it('canonicalises scheme and host case, the default port and a trailing slash', () => {
    expect(canonicalOrigin('HTTPS://Shop.Example:443/')).toBe('https://shop.example');
    expect(canonicalOrigin('http://localhost:3000')).toBe('http://localhost:3000');
    expect(canonicalOrigin('https://bücher.example')).toBe('https://xn--bcher-kva.example');
  });

  it.each(['https://shop.example/chat', 'https://shop.example?x=1', 'https://shop.example#x', 'ftp://shop.example', 'shop.example', 'null', '*', 'https://a:b@shop.example', ''])(
    'refuses %j',
    (text) => {
      expect(canonicalOrigin(text)).toBeUndefined();
    },
  );

  it('takes a pasted page address or a bare host as its site, and says so; duplicates merge', () => {
    expect(parseAllowedOrigins(['https://a.example', 'https://A.example/'])).toEqual({ origins: ['https://a.example'], notes: [] });
    const pasted = parseAllowedOrigins(['www.trailtent.nl/shop', 'https://www.trailtent.nl/tents?page=2#top', 'http://Old.Example:8080/x']);
    expect(pasted.origins).toEqual(['https://www.trailtent.nl', 'http://old.example:8080']);
    expect(pasted.notes).toEqual([
      'www.trailtent.nl/shop is saved as https://www.trailtent.nl: the chat works on every page of that site, so only its address is kept.',
      'http://Old.Example:8080/x is saved as http://old.example:8080: the chat works on every page of that site, so only its address is kept.',
    ]);
    expect(originFromPasted('shop.example')).toEqual({ origin: 'https://shop.example', changed: true });
  });

  it.each(['ftp://shop.example', 'https://a:b@shop.example/x', 'not a site', 'null', '*', ''])('refuses %j as a website, naming the item in plain words', (text) => {
    try {
      parseAllowedOrigins(['https://a.example', text]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).details).toEqual([{ field: 'allowed_origins[1]', message: expect.stringContaining("is not a website's address: write it as the browser's address bar shows your shop") }]);
    }
  });
});
