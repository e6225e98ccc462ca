/**
 * robots.txt as a website's sync obeys it (RFC 9309): the group for our agent (`botlink`) if there is one, else the
 * group for `*`; the longest matching Allow or Disallow rule wins, Allow on a tie; `*` and a final `$` in a rule as
 * the RFC says. `Sitemap:` lines are read whatever group they stand in.
 */
import { ROBOTS_AGENT } from './limits.ts';

export interface Robots {
  /** Whether the path (with its query) may be fetched. */
  allows(pathAndQuery: string): boolean;
  /** The sitemaps the file names. */
  sitemaps: string[];
}

interface Rule {
  allow: boolean;
  pattern: string;
  match: RegExp;
}

export const ALLOW_ALL: Robots = { allows: () => true, sitemaps: [] };

export function parseRobots(text: string): Robots {
  const groups: { agents: string[]; rules: Rule[] }[] = [];
  const sitemaps: string[] = [];
  let current: { agents: string[]; rules: Rule[] } | undefined;
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
        current = { agents: [], rules: [] };
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
  }
  const ours = groups.filter((g) => g.agents.some((a) => a === ROBOTS_AGENT || (a !== '*' && ROBOTS_AGENT.startsWith(a))));
  const chosen = ours.length ? ours : groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  return {
    sitemaps,
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
