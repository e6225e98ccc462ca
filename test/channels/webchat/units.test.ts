/** The website chat's pure parts: the escalation phrases, the origin rules and the token bucket. */
import { describe, expect, it } from 'vitest';
import { asksForPerson, ESCALATION_PHRASES } from '../../../src/channels/webchat/escalation-phrases.ts';
import { canonicalOrigin, parseAllowedOrigins } from '../../../src/channels/webchat/origins.ts';
import { createRateLimiter } from '../../../src/channels/webchat/rate-limiter.ts';
import { AppError } from '../../../src/errors.ts';

describe('a visitor asking for a person (escalation type detected)', () => {
  it.each([
    'Can I speak to a person?',
    'I want to talk to a human',
    'HUMAN',
    'human!!',
    'Please, a real   person.',
    'I’d like to talk to someone about my order',
    'Kan ik een medewerker spreken?',
    'Ik wil een mens spreken',
    'Mag ik iemand spreken van de klantenservice',
    'Kunt u mij doorverbinden?',
    'Ik wil met iemand praten',
    'Mééwerker? nee: medewerker',
  ])('detects %j', (text) => {
    expect(asksForPerson(text)).toBe(true);
  });

  it.each([
    'How fast do you ship?',
    'Is this humane?',
    'Wat is de medewerkerstevredenheid?',
    'Do you sell humanoid robots?',
    'Verzenden jullie naar België?',
    'Where is my order 1234?',
    '',
  ])('leaves %j to the knowledge base', (text) => {
    expect(asksForPerson(text)).toBe(false);
  });

  it('every phrase matches itself (the list is written in its normalised form)', () => {
    for (const p of Object.values(ESCALATION_PHRASES).flat()) expect(asksForPerson(`well, ${p}.`), p).toBe(true);
  });
});

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

describe('the token bucket per widget key', () => {
  it('allows the burst, then refuses with the seconds until the next token, refilling evenly', () => {
    let t = 0;
    const limiter = createRateLimiter({ burst: 30, windowMs: 10_000, now: () => t });
    for (let i = 0; i < 30; i++) expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    t += 333;
    expect(limiter.take('k').allowed).toBe(false);
    t += 1;
    expect(limiter.take('k').allowed).toBe(true); // 334 ms = one token at 3 per second
    expect(limiter.take('other').allowed).toBe(true);
  });

  it('rounds Retry-After up to whole seconds for slow refills', () => {
    const limiter = createRateLimiter({ burst: 1, windowMs: 5_500, now: () => 0 });
    limiter.take('k');
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 6 });
  });

  it('drops full (idle) buckets once it holds the most it may, never a bucket in use', () => {
    let t = 0;
    const limiter = createRateLimiter({ burst: 2, windowMs: 1_000, maxBuckets: 2, now: () => t });
    limiter.take('a');
    limiter.take('b');
    limiter.take('b');
    t += 500; // a is full again, b has one token
    limiter.take('c');
    expect(limiter.size()).toBe(2);
    expect(limiter.take('b').allowed).toBe(true);
    expect(limiter.take('b').allowed).toBe(false);
  });
});
