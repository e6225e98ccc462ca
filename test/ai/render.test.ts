import { describe, expect, it } from 'vitest';
import { MAX_SPOKEN_CHARS, MAX_WEBCHAT_TEXT_CHARS, MAX_WHATSAPP_TEXT_CHARS } from '../../src/ai/limits.ts';
import { renderForSpeech, renderForText, speakList } from '../../src/ai/render.ts';

describe('renderForSpeech: a reply as a voice should say it', () => {
  it.each([
    // markdown
    ['en', 'bold and headers go', '## Delivery\nWe deliver **every day**.', 'Delivery. We deliver every day.'],
    ['en', 'a short list becomes one sentence', 'We sell:\n- apples\n- pears\n- plums', 'We sell: apples, pears and plums.'],
    ['nl', 'a short list in Dutch', 'Wij verkopen:\n1. appels\n2. peren', 'Wij verkopen: appels en peren.'],
    [
      'en',
      'a heading introduces its list; more than 3 items: the first 3 and "and more"',
      '**Opening hours**\n* Monday\n* Tuesday\n* Wednesday\n* Thursday',
      'Opening hours: Monday, Tuesday, Wednesday and more.',
    ],
    ['nl', 'long list in Dutch', 'Kleuren:\n- rood\n- groen\n- blauw\n- geel\n- zwart', 'Kleuren: rood, groen, blauw en meer.'],
    ['en', 'a list after a full sentence is a sentence of its own', 'We ship to two countries.\n- the Netherlands\n- Belgium', 'We ship to two countries. The Netherlands and Belgium.'],
    ['en', 'lines become sentences', 'Hello\nWe are open today', 'Hello. We are open today.'],
    ['en', 'inline code, strikethrough and emojis go', 'Use code `SUMMER` ~~now~~ 🎉👍🏽', 'Use code SUMMER now.'],
    // links and addresses
    ['en', 'a URL after "visit" is "our website"', 'Visit https://shop.example.com/faq?x=1.', 'Visit our website.'],
    ['en', 'a URL elsewhere is "on our website"', 'More details: https://shop.example.com/faq', 'More details: on our website.'],
    ['nl', 'a URL in Dutch', 'Meer informatie vindt u op www.example.nl/info.', 'Meer informatie vindt u op onze website.'],
    ['nl', 'a URL elsewhere in Dutch', 'De voorwaarden staan hier https://example.nl/av', 'De voorwaarden staan hier op onze website.'],
    ['en', 'a markdown link keeps its words', 'Read [our return policy](https://example.com/returns).', 'Read our return policy.'],
    ['en', 'an email address in English', 'Mail info@example.com.', 'Mail info at example dot com.'],
    ['nl', 'an email address in Dutch', 'Mail naar klant.service@example.co.uk', 'Mail naar klant punt service apenstaartje example punt co punt uk.'],
    // prices
    ['nl', '€ 12,50', 'De jas kost € 12,50.', 'De jas kost 12 euro 50.'],
    ['en', '€12.50', 'The coat is €12.50.', 'The coat is 12 euro 50.'],
    ['nl', 'thousands and zero cents', 'Totaal: € 1.250,00', 'Totaal: 1250 euro.'],
    ['nl', 'a round price with ,-', 'Nu € 25,- per stuk.', 'Nu 25 euro per stuk.'],
    ['en', 'cents only', 'Shipping is only € 0,95.', 'Shipping is only 95 cents.'],
    ['en', 'dollars', 'It costs $ 3.99 in the US.', 'It costs 3 dollars 99 in the US.'],
    ['nl', 'amount before the currency', 'Dat kost 7,50 euro.', 'Dat kost 7 euro 50.'],
    // dates, times and ranges
    ['en', 'an ISO date in English', 'Your order arrives on 2026-11-22.', 'Your order arrives on 22 November 2026.'],
    ['nl', 'an ISO date in Dutch', 'Uw bestelling komt op 2026-11-22.', 'Uw bestelling komt op 22 november 2026.'],
    ['nl', 'an ISO date and time', 'Afspraak: 2026-03-05T09:30:00Z', 'Afspraak: 5 maart 2026 om 09:30.'],
    ['en', 'not a real date stays as it is', 'Code 2026-13-45 applies.', 'Code 2026-13-45 applies.'],
    ['en', 'time ranges', 'Open 09:00-17:00 daily.', 'Open 09:00 to 17:00 daily.'],
    ['nl', 'day ranges', 'Levering duurt 3-5 werkdagen.', 'Levering duurt 3 tot 5 werkdagen.'],
    ['en', 'a phone number is not a range', 'Call 020-1234567.', 'Call 020-1234567.'],
    ['en', 'ampersands', 'Terms & conditions apply', 'Terms and conditions apply.'],
    ['de', 'an unknown language uses the English words', 'Siehe https://example.de', 'Siehe on our website.'],
  ])('%s: %s', (language, _what, text, spoken) => {
    expect(renderForSpeech(text, language)).toBe(spoken);
  });

  it(`cuts to ${MAX_SPOKEN_CHARS} characters at a sentence boundary`, () => {
    const text = Array.from({ length: 40 }, (_, i) => `This is sentence number ${i + 1}.`).join(' ');
    const spoken = renderForSpeech(text, 'en');
    expect(spoken.length).toBeLessThanOrEqual(MAX_SPOKEN_CHARS);
    expect(spoken.length).toBeGreaterThan(MAX_SPOKEN_CHARS - 40);
    expect(spoken).toMatch(/^This is sentence number 1\. .* number \d+\.$/);
  });

  it('cuts one endless sentence at a word and still ends it', () => {
    const spoken = renderForSpeech(`We have ${'many fine products '.repeat(80)}for you`, 'en');
    expect(spoken.length).toBeLessThanOrEqual(MAX_SPOKEN_CHARS);
    expect(spoken).toMatch(/products\.$/);
  });

  it('an empty reply stays empty', () => {
    expect(renderForSpeech('  \n ', 'nl')).toBe('');
  });
});

describe('speakList', () => {
  it.each([
    [['a'], 'en', 'a'],
    [['a', 'b'], 'en', 'a and b'],
    [['a', 'b', 'c'], 'nl', 'a, b en c'],
    [['a', 'b', 'c', 'd'], 'en', 'a, b, c and more'],
    [['a;', 'b.'], 'en', 'a and b'],
  ])('%j in %s → %s', (items, language, spoken) => {
    expect(speakList(items, language)).toBe(spoken);
  });
});

describe('renderForText: WhatsApp and website chat', () => {
  it.each([
    ['whatsapp', 'bold becomes WhatsApp bold', 'This is **important**.', 'This is *important*.'],
    ['whatsapp', '__bold__ too', 'This is __important__.', 'This is *important*.'],
    ['whatsapp', 'italic becomes WhatsApp italic', 'This is *quite* nice.', 'This is _quite_ nice.'],
    ['whatsapp', 'strikethrough', 'Was ~~€ 20~~ now € 15.', 'Was ~€ 20~ now € 15.'],
    ['whatsapp', 'a heading loses its #s and becomes bold', '## Verzending\nBinnen 2 dagen.', '*Verzending*\nBinnen 2 dagen.'],
    ['whatsapp', 'links stay', 'See https://shop.example.com/faq for more.', 'See https://shop.example.com/faq for more.'],
    ['whatsapp', 'a markdown link shows its address', 'See [the FAQ](https://example.com/faq).', 'See the FAQ (https://example.com/faq).'],
    ['whatsapp', 'a link that is its own label once', '[https://example.com](https://example.com)', 'https://example.com'],
    ['whatsapp', 'underscores in URLs are not formatting', 'Go to https://example.com/__init__/a_b_c now', 'Go to https://example.com/__init__/a_b_c now'],
    ['whatsapp', 'bullets become dashes', '* one\n* two\n+ three', '- one\n- two\n- three'],
    ['whatsapp', 'code stays as it is', 'Use `**code**` here', 'Use `**code**` here'],
    ['whatsapp', 'blank lines collapse, rules go', 'A\n\n\n\n---\n\nB', 'A\n\nB'],
    ['webchat', 'the website chat gets plain text', '# Title\n**Bold** and *italic*, see [FAQ](https://x.example/faq)', 'Title\nBold and italic, see FAQ (https://x.example/faq)'],
    ['webchat', 'a mailto link shows the address', 'Mail [us](mailto:info@example.com).', 'Mail us (info@example.com).'],
  ] as const)('%s: %s', (channel, _what, text, rendered) => {
    expect(renderForText(text, channel)).toBe(rendered);
  });

  it(`cuts WhatsApp text to ${MAX_WHATSAPP_TEXT_CHARS} characters, at a sentence boundary, with an ellipsis`, () => {
    const text = Array.from({ length: 300 }, (_, i) => `Sentence ${i} is here.`).join(' ');
    const out = renderForText(text, 'whatsapp');
    expect(Array.from(out).length).toBeLessThanOrEqual(MAX_WHATSAPP_TEXT_CHARS);
    expect(out).toMatch(/is here\.…$/);
  });

  it('counts characters as code points (an emoji is one) and never splits one', () => {
    const out = renderForText('😀'.repeat(MAX_WEBCHAT_TEXT_CHARS + 10), 'webchat');
    expect(Array.from(out).length).toBe(MAX_WEBCHAT_TEXT_CHARS);
    expect(out.isWellFormed()).toBe(true);
  });

  it('leaves a short text as it is', () => {
    expect(renderForText('Your order ships tomorrow.', 'whatsapp')).toBe('Your order ships tomorrow.');
  });
});
