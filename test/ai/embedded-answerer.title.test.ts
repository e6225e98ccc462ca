import { describe, expect, it } from 'vitest';
import { composeAnswer } from '../../src/ai/embedded-answerer.ts';
import type { KnowledgePassage } from '../../src/knowledge/types.ts';

function passage(id: string, title: string, text: string, score: number): KnowledgePassage {
  return { id, source: 'page', externalId: `page-${id}`, title, url: null, text, score };
}

describe('a title is never read out as part of an answer', () => {
  it('skips a line of the passage that only repeats its title', () => {
    const returns = passage(
      'returns',
      'Returns policy',
      'Returns policy\n\nYou can return any item within 30 days of delivery. Shoes that have been worn outside cannot be returned.',
      0.8,
    );
    // The message names the title: its line was the best-matching "sentence" ("Returns policy.").
    const answer = composeAnswer({ message: 'Tell me about the returns policy', language: 'en', passages: [returns] });
    expect(answer.source).toBe('knowledge_base');
    expect(answer.text).toBe('You can return any item within 30 days of delivery. Shoes that have been worn outside cannot be returned.');
  });

  it('skips the title in any case and punctuation, and reads a passage that is only its title as nothing', () => {
    const heading = passage('faq', 'Delivery times', 'DELIVERY TIMES:\nOrders placed before 22:00 are delivered the next working day.', 0.8);
    const answer = composeAnswer({ message: 'What are your delivery times?', language: 'en', passages: [heading] });
    expect(answer.text).toBe('Orders placed before 22:00 are delivered the next working day.');
    const bare = passage('bare', 'Delivery times', 'Delivery times', 0.9);
    expect(composeAnswer({ message: 'What are your delivery times?', language: 'en', passages: [bare] }).source).toBe('fallback');
  });
});
