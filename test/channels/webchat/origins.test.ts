/** The website chat's pure parts: the escalation phrases, the origin rules and the token bucket. */
import { describe, expect, it } from 'vitest';
import { canonicalOrigin, parseAllowedOrigins } from '../../../src/channels/webchat/origins.ts';
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

  it('a list with a bad item is refused naming it; duplicates merge', () => {
    expect(parseAllowedOrigins(['https://a.example', 'https://A.example/'])).toEqual(['https://a.example']);
    try {
      parseAllowedOrigins(['https://a.example', 'https://a.example/path']);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).details).toEqual([{ field: 'allowed_origins[1]', message: expect.stringContaining('web origin') }]);
    }
  });
});
