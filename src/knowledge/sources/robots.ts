/**
 * robots.txt as a website's sync obeys it (RFC 9309): the group for our agent (`botlink`) if there is one, else the
 * group for `*`; the longest matching Allow or Disallow rule wins, Allow on a tie; `*` and a final `$` in a rule as
 * the RFC says. `Sitemap:` lines are read whatever group they stand in. `Crawl-delay` (not in the RFC, but what many
 * shops' hosts set) is read from the same group: seconds between two requests, fractions allowed.
 */
import { ROBOTS_AGENT } from './limits.ts';

export interface Robots {
  /** Whether the path (with its query) may be fetched. */
  allows(pathAndQuery: string): boolean;
  /** The sitemaps the file names. */
  sitemaps: string[];
  /** The group's Crawl-delay in ms, 0 when it sets none (the sync caps it: MAX_CRAWL_DELAY_MS). */
  crawlDelayMs: number;
}

interface Group {
  agents: string[];
  rules: Rule[];
  crawlDelayMs: number | null;
}

interface Rule {
  allow: boolean;
  pattern: string;
  match: RegExp;
}

export const ALLOW_ALL: Robots = { allows: () => true, sitemaps: [], crawlDelayMs: 0 };

export function parseRobots(text: string): Robots {
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | undefined;
  let lastWasAgent = false;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'sitemap') {
      if (value) sitemaps.push(value);
      continue;
    }
    if (key === 'user-agent') {
      if (!lastWasAgent || !current) {
        current = { agents: [], rules: [], crawlDelayMs: null };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if ((key === 'allow' || key === 'disallow') && current) {
      // An empty Disallow allows everything: it adds no rule.
      if (value) current.rules.push({ allow: key === 'allow', pattern: value, match: ruleRegExp(value) });
    }
    if (key === 'crawl-delay' && current && current.crawlDelayMs === null) {
      const seconds = /^\d+(?:\.\d+)?$/.test(value) ? Number(value) : NaN;
      if (Number.isFinite(seconds)) current.crawlDelayMs = Math.round(seconds * 1000);
    }
  }
  const ours = groups.filter((g) => g.agents.some((a) => a === ROBOTS_AGENT || (a !== '*' && ROBOTS_AGENT.startsWith(a))));
  const chosen = ours.length ? ours : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  return {
    sitemaps,
    crawlDelayMs: chosen.find((g) => g.crawlDelayMs !== null)?.crawlDelayMs ?? 0,
    allows(pathAndQuery) {
      let best: Rule | undefined;
      for (const rule of rules) {
        if (!rule.match.test(pathAndQuery)) continue;
        if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow)) best = rule;
      }
      return best?.allow ?? true;
    },
  };
}

/** A rule's path as a prefix match: `*` any characters, a final `$` the end. */
function ruleRegExp(pattern: string): RegExp {
  const anchored = pattern.endsWith('$');
  const body = (anchored ? pattern.slice(0, -1) : pattern)
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}${anchored ? '$' : ''}`);
}
