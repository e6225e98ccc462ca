/** The website chat's pure parts: the escalation phrases, the origin rules and the token bucket. */
import { describe, expect, it } from 'vitest';
import { asksForPerson, ESCALATION_PHRASES } from '../../../src/channels/webchat/escalation-phrases.ts';

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
