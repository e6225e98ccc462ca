/** Limits of phrasings, the other wordings of a passage (docs/knowledge.md, "The team teaches the bot"). */

/** One phrasing, in characters: a customer's question, not a page. */
export const MAX_PHRASING_CHARS = 300;
/**
 * The team's phrasings of one document (page, entry, product): beyond this many a page is better split into entries
 * (docs/knowledge.md, "The team teaches the bot"). Generated phrasings are counted apart.
 */
export const MAX_TEAM_PHRASINGS_PER_DOCUMENT = 50;
