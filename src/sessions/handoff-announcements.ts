/**
 * Whether a reply already announces the handoff, so the customer hears it once ("Ik verbind je door met een
 * collega. Ik verbind u door met een collega."). Two promises are told apart, because they are not interchangeable:
 * "I'll connect you" (a person now) and "the team will follow up" (later). A reply that promises a connection the
 * team cannot give still gets our sentence that the team will follow up instead.
 *
 * Phrases are matched in every language we know, whatever the conversation's language: integrators often answer in a
 * language of their own. Matching is by whole words, case-insensitive, on the text as the customer would see it.
 */
export type HandoffPromise = 'connect' | 'follow_up';

/** Word patterns per language; each is tried as a whole-word, case-insensitive regular expression. */
const PROMISES: Record<HandoffPromise, readonly string[]> = {
  connect: [
    // en
    String.raw`(connect|connecting|transfer|transferring|put|putting|pass|passing|put) you (through|over|to|with)`,
    String.raw`(connect|transfer)(ing)? your call`,
    String.raw`(a|one of our|my) (colleague|colleagues|agent|team member|representative)`,
    String.raw`(speak|talk) (to|with) (a|an) (person|human|agent|colleague)`,
    // nl
    String.raw`(verbind|verbinden|verbinde) (u|je|jou) (door|met)`,
    String.raw`(door ?verbind\w*|doorverbonden|doorgeschakeld|schakel (u|je) door)`,
    String.raw`(een|mijn|onze) (collega|medewerker|medewerkster)`,
    // de
    String.raw`(verbinde|verbinden) (sie|dich) (mit|weiter)`,
    String.raw`(einem|einer|einen) (kollegen|kollegin|mitarbeiter|mitarbeiterin)`,
    // fr
    String.raw`(je vous|nous vous) (mets|mettons|transf[eè]re|transf[eé]rons|passe|passons)`,
    String.raw`(un|une) (coll[eè]gue|conseill[eè]re?|agent)`,
  ],
  follow_up: [
    // en
    String.raw`(will|\p{L}+'ll|is going to|are going to) (follow up|get back to you|contact you|be in touch|reach out|call you( back)?)`,
    String.raw`(follow up|get back to you) (with you )?(soon|shortly|later|as soon as)`,
    // nl
    String.raw`(neemt|nemen|neem) (zo snel mogelijk |spoedig |later |binnenkort )?(contact|telefonisch contact) (met )?(u|je|jou)`,
    String.raw`(neemt|nemen) .{0,40}contact .{0,20}op`,
    String.raw`(kom|komt|komen) (zo snel mogelijk |spoedig |later |binnenkort )?(bij|op) (u|je|jou|uw vraag|je vraag) terug`,
    String.raw`(bellen|belt|bel) (u|je|jou) (terug|later|zo)`,
    // de
    String.raw`(melden sich|meldet sich|melde mich) .{0,40}bei (ihnen|dir)`,
    String.raw`(kontaktiert|kontaktieren) (sie|dich)`,
    // fr
    String.raw`(vous|te) (recontacter|recontactera|recontacteront|rappeler|rappellera|rappelleront)`,
    String.raw`(reviendra|reviendrons|reviendront) (vers vous|vers toi)`,
  ],
};

const MATCHERS: Record<HandoffPromise, RegExp> = {
  connect: new RegExp(`(?<![\\p{L}\\p{N}])(?:${PROMISES.connect.join('|')})(?![\\p{L}\\p{N}])`, 'iu'),
  follow_up: new RegExp(`(?<![\\p{L}\\p{N}])(?:${PROMISES.follow_up.join('|')})(?![\\p{L}\\p{N}])`, 'iu'),
};

/** Whether `reply` already makes this promise to the customer. */
export function announces(reply: string, promise: HandoffPromise): boolean {
  return reply.trim() !== '' && MATCHERS[promise].test(reply.normalize('NFC').replace(/[\u2019\u2018]/g, "'"));
}
