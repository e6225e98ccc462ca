import { describe, expect, it } from 'vitest';
import { phrases } from '../../src/ai/phrases.ts';
import { announces } from '../../src/sessions/handoff-announcements.ts';

describe('a reply that already announces the handoff', () => {
  it.each([
    ['Ik verbind je door met een collega.', 'connect'],
    ['Een moment, ik verbind u door met een medewerker.', 'connect'],
    ["I'll connect you with a colleague now.", 'connect'],
    ['Let me transfer you to one of our agents.', 'connect'],
    ['Ich verbinde Sie mit einem Kollegen.', 'connect'],
    ['Je vous transfère à un conseiller.', 'connect'],
    ['Het team neemt morgen contact met u op.', 'follow_up'],
    ['We nemen zo snel mogelijk contact met je op.', 'follow_up'],
    ['Our team will get back to you tomorrow.', 'follow_up'],
    ['Someone will contact you within a day.', 'follow_up'],
    ['We’ll be in touch soon.', 'follow_up'],
  ] as const)('%j promises %s', (reply, promise) => {
    expect(announces(reply, promise)).toBe(true);
  });

  it('our own sentences count as the announcement they are', () => {
    for (const table of [phrases.en, phrases.nl]) {
      expect(announces(table.handoff_human, 'connect')).toBe(true);
      expect(announces(table.handoff_forward, 'follow_up')).toBe(true);
    }
  });

  it.each([
    ['Uw bestelling 1234 is onderweg.'],
    ['Your order ships tomorrow.'],
    ['We connect all our stores to one stock system.'],
    ['The colleagueship award went to our Utrecht shop.'],
    [''],
  ])('%j promises nothing', (reply) => {
    expect(announces(reply, 'connect')).toBe(false);
    expect(announces(reply, 'follow_up')).toBe(false);
  });

  it('a promise to connect is not a promise to follow up, and the other way round', () => {
    expect(announces('Ik verbind je door met een collega.', 'follow_up')).toBe(false);
    expect(announces('Het team neemt contact met u op.', 'connect')).toBe(false);
  });
});
