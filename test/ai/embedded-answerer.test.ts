import { describe, expect, it } from 'vitest';
import { composeAnswer, createEmbeddedAnswerer, keywords, sentences, wordsMatch } from '../../src/ai/embedded-answerer.ts';
import { ANSWER_THRESHOLD, MAX_ANSWER_CHARS, MAX_ANSWER_SENTENCES } from '../../src/ai/limits.ts';
import { phrase, phrases } from '../../src/ai/phrases.ts';
import type { AiStepInput } from '../../src/ai/types.ts';
import type { Lexicon } from '../../src/knowledge/query.ts';
import type { KnowledgePassage } from '../../src/knowledge/types.ts';

/** The passages' scores are relevance as the knowledge search gives it (src/knowledge/query.ts): all found relevant. */
function passage(id: string, title: string, text: string, score: number): KnowledgePassage {
  return { id, source: 'page', externalId: `page-${id}`, title, url: `https://shop.example.com/${id}`, text, score };
}

const hours = passage(
  'hours',
  'Opening hours',
  'Welcome to our shop in Utrecht. We are open Monday to Friday from 9:00 to 17:00. On Saturday we are open from ' +
    '10:00 to 16:00. We are closed on Sunday and on public holidays.',
  0.8,
);
const shipping = passage(
  'shipping',
  'Shipping',
  'Orders ship within two working days. Shipping is free above 50 euro. Parcels are delivered by PostNL.',
  0.8,
);
const returns = passage(
  'returns',
  'Returns',
  'You can return a product within 30 days. Returns are free of charge. Refunds reach your account within a week.',
  0.8,
);
const verzending = passage(
  'verzending',
  'Verzending',
  'Bestellingen worden binnen twee werkdagen verzonden. Verzending is gratis boven 50 euro. De bezorging gaat via PostNL.',
  0.8,
);

function input(overrides: Partial<AiStepInput>): AiStepInput {
  return {
    channel: 'whatsapp',
    language: 'en',
    message: '',
    history: [],
    passages: [hours, shipping, returns],
    integratorContext: null,
    tools: [],
    rounds: [],
    ...overrides,
  };
}

describe('the embedded answerer picks the sentence that answers the message', () => {
  it.each([
    ['When are you open on Saturday?', 'On Saturday we are open from 10:00 to 16:00.'],
    ['How long does shipping take?', 'Orders ship within two working days.'],
    ['Are returns free?', 'Returns are free of charge.'],
    ['Are you closed on Sunday?', 'We are closed on Sunday and on public holidays.'],
  ])('%s → leads with the matching sentence', (message, lead) => {
    const step = composeAnswer(input({ message }));
    expect(step.source).toBe('knowledge_base');
    expect(step.text.startsWith(lead)).toBe(true);
  });

  it('answers in Dutch from Dutch passages, leading with the customer\'s own word form (bezorging ~ bezorgen) over its synonyms', () => {
    const step = composeAnswer(input({ language: 'nl', message: 'Met wie bezorgen jullie?', passages: [verzending] }));
    expect(step).toMatchObject({ kind: 'answer', source: 'knowledge_base' });
    expect(step.text.startsWith('De bezorging gaat via PostNL.')).toBe(true);
  });

  it('finds the answer in other words than the customer used: "send back" is a return, "postage" is shipping', () => {
    expect(composeAnswer(input({ message: 'Can I send something back?' })).text.startsWith('You can return a product within 30 days.')).toBe(true);
    expect(composeAnswer(input({ message: 'is postage free?' })).text.startsWith('Shipping is free above 50 euro.')).toBe(true);
    expect(composeAnswer(input({ message: 'when do i get my money back' })).text.startsWith('Refunds reach your account within a week.')).toBe(true);
  });

  it('reads a typo as the word it stands for', () => {
    expect(composeAnswer(input({ message: 'retrun policy?', passages: [returns] })).text.startsWith('You can return a product within 30 days.')).toBe(true);
  });

  it('leaves out the welcome line and other sentences that share no word with the question', () => {
    const step = composeAnswer(input({ message: 'When are you open on Saturday?' }));
    expect(step.text).not.toContain('Welcome');
    expect(step.text).not.toContain('PostNL');
  });

  it('keeps the answer short: at most the sentence and character budget', () => {
    const long = passage('long', 'Long', Array.from({ length: 12 }, (_, i) => `Shipping fact number ${i} is about shipping parcels.`).join(' '), 0.9);
    const step = composeAnswer(input({ message: 'shipping parcels', passages: [long] }));
    expect(sentences(step.text, 'en').length).toBeLessThanOrEqual(MAX_ANSWER_SENTENCES);
    expect(step.text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  });

  it('cuts a single sentence that is longer than the budget at a word', () => {
    const huge = passage('huge', 'Huge', `Shipping ${'takes a long and winding road '.repeat(30)}to you.`, 0.9);
    const step = composeAnswer(input({ message: 'shipping', passages: [huge] }));
    expect(step.text.length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(step.text.endsWith('…')).toBe(true);
  });

  it('uses the first sentence of a passage above the threshold when no sentence shares a word (the search found it)', () => {
    const step = composeAnswer(input({ message: 'hmm?', passages: [shipping] }));
    expect(step.text).toBe('Orders ship within two working days.');
  });
});

describe("a page's own question is quoted with its answer", () => {
  it('"what if we miss a class" quotes "Missed a lesson?" and the sentence after it', () => {
    const classes = passage(
      'classes',
      'Puppy classes',
      'The puppy course has eight weekly lessons on Saturday morning. Missed a lesson? You can catch up in the next group at no cost. Bring treats.',
      0.9,
    );
    const step = composeAnswer(input({ message: 'what if we miss a class', passages: [classes] }));
    expect(step.text).toContain('Missed a lesson? You can catch up in the next group at no cost.');
  });
});

describe('below the threshold the customer is offered the team, in their language', () => {
  const weak = [hours, shipping].map((p) => ({ ...p, score: ANSWER_THRESHOLD - 0.01 }));

  it.each([
    ['en', 'When are you open?', phrases.en.dont_know],
    ['nl', 'Wanneer zijn jullie open?', phrases.nl.dont_know],
    ['nl-BE', 'Wanneer zijn jullie open?', phrases.nl.dont_know],
    ['de', 'Wann haben Sie geöffnet?', phrases.de.dont_know],
    ['es', '¿Cuándo abren?', phrases.en.dont_know],
  ])('%s', (language, message, text) => {
    expect(composeAnswer(input({ language, message, passages: weak }))).toEqual({ kind: 'answer', source: 'fallback', text });
  });

  it('Dutch and German have every phrase a turn says, so a German customer is never told in English', () => {
    expect(Object.keys(phrases.de).sort()).toEqual(Object.keys(phrases.en).sort());
    expect(Object.keys(phrases.nl).sort()).toEqual(Object.keys(phrases.en).sort());
  });

  it('with no passages at all', () => {
    expect(composeAnswer(input({ message: 'Where is my order?', passages: [] })).source).toBe('fallback');
  });
});

/** The note a handled-false reply carries (the kind a newcomer saw sent to a WhatsApp customer as the answer). */
const NOTE = 'No order number was given, so the caller did not ask about an order.';

describe("the integrator's note (protocol §1.3: handled false is context for a language model only)", () => {
  const embedded = createEmbeddedAnswerer();

  it('is never the answer: with no passage the customer gets the honest fallback sentence', async () => {
    const step = await embedded.step(input({ message: 'Where is my parcel?', passages: [], integratorContext: NOTE }));
    expect(step).toEqual({ kind: 'answer', source: 'fallback', text: phrase('dont_know', 'en') });
  });

  it('is never part of an answer from the passages, even when it shares the message\'s words', async () => {
    const step = await embedded.step(input({ message: 'When will my order ship?', integratorContext: 'Your order 1234 ships tomorrow.' }));
    expect(step).toMatchObject({ kind: 'answer', source: 'knowledge_base' });
    expect(step.kind === 'answer' && step.text).not.toContain('1234');
    expect(step).toEqual(await embedded.step(input({ message: 'When will my order ship?' })));
  });

  it('in Dutch too: the Dutch fallback sentence, not the note', async () => {
    const step = await embedded.step(input({ language: 'nl', message: 'Waar is mijn pakket?', passages: [], integratorContext: 'Klant vroeg niet naar een bestelling.' }));
    expect(step).toEqual({ kind: 'answer', source: 'fallback', text: phrases.nl.dont_know });
  });

  it('composing an answer takes no integrator context at all (its input type has none)', () => {
    // @ts-expect-error integratorContext is not part of what the embedded answerer reads
    const step = composeAnswer({ message: 'Where is my parcel?', language: 'en', passages: [], integratorContext: NOTE });
    expect(step.text).not.toContain('order');
  });
});

describe('the embedded answerer as an AiPort', () => {
  it('is deterministic: the same input gives the same answer', async () => {
    const ai = createEmbeddedAnswerer();
    const one = input({ message: 'When are you open on Saturday and do you ship with PostNL?' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => ai.step(structuredClone(one))));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]).toEqual(composeAnswer(one));
  });

  it('never asks for tools, even when tools are offered', async () => {
    const step = await createEmbeddedAnswerer().step(
      input({ message: 'Where is my order?', tools: [{ name: 'order_status', description: 'Order status', parameters: { type: 'object' } }] }),
    );
    expect(step.kind).toBe('answer');
  });

  it('honours an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(createEmbeddedAnswerer().step(input({ message: 'hi', signal: controller.signal }))).rejects.toThrow();
  });

  it('is named embedded', () => {
    expect(createEmbeddedAnswerer().name).toBe('embedded');
  });
});

describe('matching words', () => {
  it.each([
    ['open', 'opening', true],
    ['order', 'orders', true],
    ['bezorgen', 'bezorging', true],
    ['deliver', 'delivered', true],
    ['ship', 'shop', false],
    ['hours', 'house', false],
    ['terug', 'terugsturen', false],
  ])('%s ~ %s: %s', (a, b, expected) => expect(wordsMatch(a, b)).toBe(expected));

  it('drops English and Dutch stopwords and folds accents', () => {
    expect(keywords('What are the opening hours of the café?')).toEqual(['opening', 'hours', 'cafe']);
    expect(keywords('Wat zijn de openingstijden van de winkel?')).toEqual(['openingstijden', 'winkel']);
  });
});

describe('the fixed phrases', () => {
  it('exist in nl and en for every key, with English as the fallback', () => {
    expect(Object.keys(phrases.nl).sort()).toEqual(Object.keys(phrases.en).sort());
    expect(phrase('filler', 'nl-NL')).toBe(phrases.nl.filler);
    expect(phrase('handoff_forward', 'fr')).toBe('The team will follow up with you.');
    expect(phrase('team_unavailable', 'EN')).toBe('The team is not available right now; they will follow up with you.');
  });
});

describe('a page in another language than the customer’s is quoted, and the answer says so in the customer’s language', () => {
  const lexicon: Lexicon = {
    relatedWords: () => [],
    translations: (from, to, word) => (from === 'nl' && to === 'en' ? ({ verzending: ['shipping'], gratis: ['free'], retour: ['return'] } as Record<string, string[]>)[word] ?? [] : []),
  };
  const english = { ...shipping, language: 'en' };

  it('reads the page with the question’s words translated and names its language', () => {
    const step = composeAnswer(input({ language: 'nl', message: 'is de verzending gratis?', passages: [english] }), lexicon);
    expect(step).toMatchObject({ kind: 'answer', source: 'knowledge_base' });
    expect(step.text).toMatch(/^Deze pagina is in het Engels: Shipping is free above 50 euro\./);
    const german = composeAnswer(input({ language: 'de', message: 'PostNL?', passages: [english] }), lexicon);
    expect(german.text).toBe('Diese Seite ist auf Englisch: Parcels are delivered by PostNL.');
  });

  it('quotes nothing when no sentence of the page holds the question’s words: a translation is no reason to guess', () => {
    const step = composeAnswer(input({ language: 'nl', message: 'hoe lang duurt het?', passages: [english] }), lexicon);
    expect(step).toEqual({ kind: 'answer', source: 'fallback', text: phrases.nl.dont_know });
  });

  it('a page in the customer’s language that comes as close is read instead', () => {
    const step = composeAnswer(input({ language: 'nl', message: 'is de verzending gratis?', passages: [{ ...english, score: 0.9 }, verzending] }), lexicon);
    expect(step.text).toMatch(/^Verzending is gratis boven 50 euro\./);
  });

  it('a passage in the customer’s own language is quoted without a word about its language', () => {
    const step = composeAnswer(input({ language: 'nl', message: 'is de verzending gratis?', passages: [verzending] }), lexicon);
    expect(step.text).toMatch(/^Verzending is gratis boven 50 euro\./);
    expect(step.text).not.toMatch(/Nederlands|pagina/);
  });
});
