import { describe, expect, it } from 'vitest';
import { composeAnswer } from '../../src/ai/embedded-answerer.ts';
import { askedKinds, heldKinds, holdsAsked } from '../../src/knowledge/answer-kinds.ts';
import type { KnowledgePassage } from '../../src/knowledge/types.ts';

const kinds = (text: string) => [...askedKinds(text)].sort();
const held = (text: string) => [...heldKinds(text)].sort();

describe('the kind of fact a question asks for (src/knowledge/answer-kinds.ts)', () => {
  it('reads "when", "how long", "how much" and "where" in English, Dutch and German', () => {
    expect(kinds('how long will the grooming take')).toEqual(['duration']);
    expect(kinds('hoelang duurt een trimbeurt')).toEqual(['duration']);
    expect(kinds('wie lange dauert das trimmen')).toEqual(['duration']);
    // "When" is answered by a time or a day, and also by a duration ("within five working days").
    expect(kinds('wann bekomme ich mein Geld zurück')).toEqual(['duration', 'time']);
    expect(kinds('tot hoe laat zijn jullie open')).toEqual(['duration', 'time']);
    expect(kinds('was kostet die Welpenschule')).toEqual(['price']);
    expect(kinds('wat kost een trimbeurt')).toEqual(['price']);
    expect(kinds('where is your store')).toEqual(['place']);
    expect(kinds('wo ist euer Laden')).toEqual(['place']);
    expect(kinds('do you repair tents')).toEqual([]);
  });

  it('finds times, durations written in words, prices and addresses in a text', () => {
    expect(held('Open on Saturday from 10:00 to 16:00.')).toContain('time');
    expect(held('We call you when your pet is ready, usually after two to three hours.')).toEqual(['duration']);
    expect(held('Das Geld erhalten Sie innerhalb von fünf Werktagen zurück.')).toEqual(['duration']);
    expect(held('De puppycursus kost € 95.')).toEqual(['price']);
    expect(held('Sie finden uns am Kaldenkerkerweg 212, 5915 AG Venlo.')).toEqual(['place']);
    expect(held('Our groomers wash, cut and trim dogs and cats.')).toEqual([]);
    expect(holdsAsked(askedKinds('how much is it'), 'It costs 12 euro.')).toBe(true);
    expect(holdsAsked(askedKinds('do you sell food'), 'It costs 12 euro.')).toBe(false);
  });
});

describe('the embedded answerer reads out the sentence holding the kind of fact asked for', () => {
  const passage = (id: string, title: string, text: string, score: number): KnowledgePassage => ({
    id, source: 'page', externalId: id, title, url: null, text, score,
  });
  const booking = passage(
    'booking',
    'Grooming: booking',
    'Book a grooming appointment on our booking page or by phone. We call you when your pet is ready, usually after two to three hours. ' +
      'Grooming products are for sale in the shop. Our grooming salon uses organic shampoo. Grooming vouchers make a nice present.',
    1,
  );

  it('a duration for "how long", even in a sentence without the question’s words', () => {
    const step = composeAnswer({ message: 'how long will the grooming take', language: 'en', passages: [booking] });
    expect(step.source).toBe('knowledge_base');
    expect(step.text).toContain('two to three hours');
  });

  it('without a kind asked for, that sentence is not read out', () => {
    const step = composeAnswer({ message: 'is the grooming shampoo organic', language: 'en', passages: [booking] });
    expect(step.text).toContain('organic shampoo');
    expect(step.text).not.toContain('two to three hours');
  });
});
