/** The phrases that ask for a person, the yes after an offer, and the offers themselves (src/text/person-request.ts). */
import { describe, expect, it } from 'vitest';
import { phrase, phrases } from '../../src/ai/phrases.ts';
import { acceptsOffer, asksForPerson, offersPerson, requestsPerson } from '../../src/text/person-request.ts';

describe('a message that asks for a person', () => {
  it.each([
    // en
    ['en', 'Can I speak to a real person please?'],
    ['en', 'I want to talk to a human'],
    ['en', 'HUMAN'],
    ['en', 'human!!'],
    ['en', 'Agent'],
    ['en', 'agent please'],
    ['en', 'Please, a real   person.'],
    ['en', 'I’d like to talk to someone about my order'],
    ['en', 'Can I speak to someone?'],
    ['en', 'Let me talk to your manager'],
    ['en', 'connect me to customer service'],
    ['en', 'Could you put me through to an agent?'],
    ['en', 'Just get me a human'],
    ['en', 'I want a real person'],
    ['en', 'Is there a human I can talk to?'],
    ['en', "This bot is useless, I'd like a live agent"],
    ['en', "No, I don't want a refund. Speak to someone, please"],
    ['en', 'This is not helpful at all I want to talk to a human'],
    // nl
    ['nl', 'Kan ik een medewerker spreken?'],
    ['nl', 'Ik wil een mens spreken'],
    ['nl', 'Mag ik iemand spreken van de klantenservice'],
    ['nl', 'Kunt u mij doorverbinden?'],
    ['nl', 'Ik wil met iemand praten'],
    ['nl', 'Ik wil iemand spreken'],
    ['nl', 'Medewerker'],
    ['nl', 'een mens graag'],
    ['nl', 'Een echt mens a.u.b.'],
    ['nl', 'Mééwerker? nee: medewerker'],
    ['nl', 'Verbind me door met de klantenservice'],
    ['nl', 'Ik wil graag een medewerker'],
    ['nl', 'Kan ik met een mens chatten?'],
    // de
    ['de', 'Kann ich mit einem Mitarbeiter sprechen?'],
    ['de', 'Ich möchte mit einem Menschen reden'],
    ['de', 'Verbinden Sie mich bitte'],
    ['de', 'Einen Mitarbeiter bitte'],
    // fr
    ['fr', 'Je voudrais parler à un conseiller'],
    ['fr', "Est-ce que je peux parler à quelqu'un ?"],
    ['fr', 'Mettez-moi en relation avec le service client'],
    ['fr', 'Un humain svp'],
  ])('%s: %j asks for a person', (_language, text) => {
    expect(asksForPerson(text)).toBe(true);
  });

  it.each([
    // en: statements and questions about people are not requests for one
    ['en', "I'm a real person"],
    ['en', 'Is the agent for DHL?'],
    ['en', 'Your colleague told me to write'],
    ['en', 'Is this safe for human skin?'],
    ['en', 'Is this humane?'],
    ['en', 'Do you sell humanoid robots?'],
    ['en', 'How fast do you ship?'],
    ['en', 'Where is my order 1234?'],
    ['en', "I don't want to talk to a human"],
    ['en', 'No need to speak to someone, thanks'],
    ['en', 'The person who delivered it was rude'],
    ['en', 'I spoke to your agent yesterday'],
    ['en', 'yes'],
    ['en', ''],
    // nl
    ['nl', 'Ik ben een echt mens'],
    ['nl', 'Wat is de medewerkerstevredenheid?'],
    ['nl', 'Is de medewerker van PostNL al onderweg?'],
    ['nl', 'Mens, wat duurt dat lang'],
    ['nl', 'Verzenden jullie naar België?'],
    ['nl', 'Ik wil niet met een mens praten'],
    ['nl', 'Ik hoef geen medewerker te spreken'],
    ['nl', 'ja graag'],
    // de
    ['de', 'Mensch, das dauert lange'],
    ['de', 'Ist der Mitarbeiter von DHL schon unterwegs?'],
    // fr
    ['fr', 'Personne ne répond au téléphone'],
    ['fr', "Je ne veux pas parler à un conseiller"],
  ])('%s: %j does not', (_language, text) => {
    expect(asksForPerson(text)).toBe(false);
  });
});

describe('a yes, which asks for a person only right after an offer', () => {
  it.each([
    'yes', 'Yes!', 'yes please', 'Yes, please.', 'ok', 'OK', 'okay', 'sure', 'yeah', 'Yes please, thanks', 'please do', 'go ahead', '👍',
    'ja', 'Ja!', 'ja graag', 'Ja, graag.', 'graag', 'Graag!', 'ja hoor', 'ja, doe maar', 'oké', 'ja a.u.b.', 'is goed',
    'ja bitte', 'gerne', 'oui', "d'accord", 'oui merci',
  ])('%j is a yes', (text) => {
    expect(acceptsOffer(text)).toBe(true);
    expect(requestsPerson(text, true)).toBe(true);
    expect(requestsPerson(text, false)).toBe(false);
  });

  it.each([
    'no', 'No thanks', 'nee', 'Nee, dank je', 'nein', 'non', 'not now', 'later', 'maybe',
    'yes but where is my order?', 'Ja, maar waar is mijn pakket?', 'yes I am a real person', 'okay so what are your opening hours', '',
  ])('%j is not a yes, even after an offer', (text) => {
    expect(acceptsOffer(text)).toBe(false);
    expect(requestsPerson(text, true)).toBe(false);
  });
});

describe('a reply that offers a person', () => {
  it.each(Object.keys(phrases))("the fallback sentence (dont_know) in %s offers one", (language) => {
    expect(offersPerson(phrase('dont_know', language))).toBe(true);
  });

  it.each([
    'Shall I connect you with the team?',
    'Would you like to speak to a colleague?',
    'I can put you through to one of our agents if you like.',
    'Do you want me to transfer you?',
    'Zal ik u doorverbinden met een medewerker?',
    'Wilt u een medewerker spreken?',
    'Wil je met iemand van het team praten?',
    'Soll ich Sie mit einem Mitarbeiter verbinden?',
    'Möchten Sie mit einem Menschen sprechen?',
    "Voulez-vous que je vous mette en relation avec l'équipe ?",
    'Souhaitez-vous parler à un conseiller ?',
  ])('%j offers one', (reply) => {
    expect(offersPerson(reply)).toBe(true);
  });

  it.each([
    phrase('handoff_human', 'en'),
    phrase('handoff_forward', 'nl'),
    phrase('team_unavailable', 'en'),
    'We are open Monday to Friday from 9:00 to 17:00.',
    'Would you like the red one or the blue one?',
    'Your order ships tomorrow; our colleague at the warehouse packs it today.',
    'Wij zijn op zaterdag open van 10 tot 16 uur.',
  ])('%j does not', (reply) => {
    expect(offersPerson(reply)).toBe(false);
  });
});
