/**
 * The scenario benchmark's shop (bench/scenarios.bench.ts): ten knowledge pages of a small outdoor shop, the facts on
 * them with the ways a customer asks for each, and the suite of 50 scripted web-chat scenarios generated from them as
 * an owner would write them (`contains` the fact's words, `source` the knowledge base; some questions the pages do not
 * answer, and some conversations that end with a request for a person).
 *
 * Deterministic: the same suite in every run and process. The questions are worded close to their page: this is a
 * measurement of the time a suite takes, not of how well the built-in answerer understands customers (that is
 * `knowledge-answers`), so every scenario must pass, and a run where one does not is invalid.
 */
import type { Scenario } from '../../src/scenarios/scenario-schema.ts';
import type { SyncUpsertItem } from '../../src/knowledge/knowledge-service.ts';

const page = (external_id: string, title: string, paragraphs: string[]): SyncUpsertItem => ({
  kind: 'page',
  external_id,
  language: 'en',
  title,
  url: `https://trailhead.example/${external_id}`,
  body: paragraphs.join('\n\n'),
});

export const shopPages: SyncUpsertItem[] = [
  page('shipping', 'Shipping and delivery', [
    'Orders placed before 3 pm on a working day are shipped the same day with PostNL. Delivery in the Netherlands takes one to two working days.',
    'Shipping costs 4.95 euro per order, and orders above 60 euro are shipped free. Every parcel gets a track and trace code by email.',
  ]),
  page('returns', 'Returns and refunds', [
    'You can return unused items within 30 days of delivery. Start a return with the return form in your account, and we email you a prepaid return label.',
    'We refund the purchase price within 14 days after we receive the returned item.',
  ]),
  page('opening-hours', 'Opening hours', [
    'Our shop in Utrecht is open Tuesday to Saturday from 10:00 to 18:00. On Thursday evening the shop stays open until 21:00.',
    'The shop is closed on Sunday and Monday.',
  ]),
  page('tents', 'Tents', [
    'We sell tents of the brands Vaude, MSR and Hilleberg, for one to six people. Every tent can be seen set up in our shop.',
    'Tent pegs and repair kits for tents are sold separately.',
  ]),
  page('hiking-boots', 'Hiking boots', [
    'Our hiking boots come in sizes 36 to 48. Our staff measure your feet in the shop for free.',
    'Unworn boots can be exchanged for another size within 30 days.',
  ]),
  page('rental', 'Renting gear', [
    'You can rent a tent, a sleeping bag or a backpack for a weekend. Renting a tent costs 25 euro per weekend, plus a deposit of 100 euro.',
    'Reserve rental gear at least three days ahead.',
  ]),
  page('warranty', 'Warranty', [
    'All our products have a two-year warranty against manufacturing defects. Wear and tear, such as worn soles, is not covered by the warranty.',
    'For a warranty claim, send a photo of the defect with your order number.',
  ]),
  page('payment', 'Payment', [
    'You can pay with iDEAL, credit card, PayPal and Apple Pay. Business customers can pay by invoice within 30 days.',
    'Gift cards are available from 10 to 150 euro.',
  ]),
  page('repairs', 'Repairs', [
    'Our workshop repairs zippers, tent poles and sleeping mats. A repair usually takes five working days.',
  ]),
  page('guided-hikes', 'Guided hikes', [
    'Every first Saturday of the month we organise a free guided hike of about 12 kilometres. Sign up in the shop or by email, because places are limited to 20 walkers.',
  ]),
];

interface Fact {
  /** The words the reply must contain. */
  contains: string;
  /** Ways a customer asks for it. */
  asked: string[];
}

const facts: Fact[] = [
  { contains: 'same day', asked: ['If I order before 3 pm, is it shipped the same day?', 'When is my order shipped with PostNL?'] },
  { contains: 'one to two working days', asked: ['How long does delivery in the Netherlands take?', 'How many working days does delivery take?'] },
  { contains: '4.95 euro', asked: ['How much are the shipping costs per order?', 'What does shipping cost?'] },
  { contains: 'track and trace', asked: ['Do I get a track and trace code for my parcel?', 'Will I get a track and trace code by email?'] },
  { contains: '30 days', asked: ['Within how many days can I return unused items?', 'Can I return an item after delivery?'] },
  { contains: 'prepaid return label', asked: ['How do I start a return with the return form?', 'Do you email a return label?'] },
  { contains: '14 days', asked: ['When do you refund the purchase price?', 'How fast do I get a refund for a returned item?'] },
  { contains: '10:00 to 18:00', asked: ['When is your shop in Utrecht open?', 'What are the opening hours of the shop on Saturday?'] },
  { contains: '21:00', asked: ['Is the shop open on Thursday evening?', 'How late does the shop stay open on Thursday?'] },
  { contains: 'closed on Sunday', asked: ['Is the shop closed on Sunday?', 'Are you open on Sunday or Monday?'] },
  { contains: 'Hilleberg', asked: ['Which brands of tents do you sell?', 'Do you sell tents for six people?'] },
  { contains: 'sold separately', asked: ['Are tent pegs included with a tent?', 'Do you sell repair kits for tents?'] },
  { contains: '36 to 48', asked: ['Which sizes do your hiking boots come in?', 'Do you have hiking boots in size 47?'] },
  { contains: 'measure your feet', asked: ['Can your staff measure my feet in the shop?', 'Do you measure feet for free?'] },
  { contains: 'another size', asked: ['Can I exchange unworn boots for another size?', 'My boots are too small, can I exchange them?'] },
  { contains: '25 euro', asked: ['What does renting a tent cost per weekend?', 'How much is it to rent a tent?'] },
  { contains: 'three days ahead', asked: ['How far ahead should I reserve rental gear?', 'When do I need to reserve rental gear?'] },
  { contains: 'two-year warranty', asked: ['How long is the warranty on your products?', 'Do your products have a warranty against defects?'] },
  { contains: 'not covered', asked: ['Are worn soles covered by the warranty?', 'Does the warranty cover wear and tear?'] },
  { contains: 'photo of the defect', asked: ['How do I make a warranty claim?', 'What do I send for a warranty claim?'] },
  { contains: 'Apple Pay', asked: ['Can I pay with Apple Pay or PayPal?', 'Which ways can I pay with?'] },
  { contains: 'invoice', asked: ['Can business customers pay by invoice?', 'Do you accept payment by invoice?'] },
  { contains: '150 euro', asked: ['Do you sell gift cards?', 'How much can a gift card be?'] },
  { contains: 'zippers', asked: ['Does your workshop repair zippers?', 'Can you repair a broken tent pole?'] },
  { contains: 'five working days', asked: ['How long does a repair take?', 'How many working days does a repair usually take?'] },
  { contains: 'guided hike', asked: ['Do you organise a guided hike?', 'When is the next free guided hike?'] },
];

/** Questions the pages do not answer: the reply is "I don't know" (source fallback). */
const unanswerable = ['Do you sell kayaks?', 'Can I bring my dog along?', 'Is there a discount for students?', 'Do you have a loyalty programme?', 'Can I pay in bitcoin?'];

/** A customer's request for a person: the handoff rule hands the conversation to the team. */
const askPerson = 'Can I talk to a person, please?';

export const SUITE_SIZE = 50;

/**
 * The suite: 40 scenarios of one to three knowledge questions (each turn expects the fact's words, from the knowledge
 * base, and no handoff), 5 questions the pages do not answer (the fallback), and 5 conversations that end with a
 * request for a person (a handoff to a person of the team).
 */
export function scenarioSuite(): Scenario[] {
  const suite: Scenario[] = [];
  const questions = facts.flatMap((fact) => fact.asked.map((text) => ({ text, contains: fact.contains })));
  let next = 0;
  const ask = () => {
    const q = questions[next++ % questions.length]!;
    return { customer: q.text, expect: { contains: [q.contains], source: 'knowledge_base' as const, handoff: false } };
  };
  for (let i = 0; i < 40; i++) {
    const turns = Array.from({ length: 1 + (i % 3) }, ask);
    suite.push({ name: `Knowledge ${String(i + 1).padStart(2, '0')}: ${turns[0]!.customer}`, channel: 'webchat', language: 'en', turns });
  }
  for (const [i, text] of unanswerable.entries()) {
    suite.push({ name: `Not on the pages ${i + 1}: ${text}`, channel: 'webchat', language: 'en', turns: [{ customer: text, expect: { source: 'fallback', handoff: false } }] });
  }
  for (let i = 0; i < 5; i++) {
    const first = ask();
    suite.push({ name: `A person ${i + 1}: ${first.customer}`, channel: 'webchat', language: 'en', turns: [first, { customer: askPerson, expect: { handoff: 'human' } }] });
  }
  return suite;
}
