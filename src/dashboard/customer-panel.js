// @ts-check
/**
 * The customer beside an open conversation (docs/api-tour.md, "The team's side"): who they are on this channel (the
 * number, the WhatsApp id or the chat), their name, email and number, the page the chat started on, their language
 * and local time (GET /v1/sessions/{id} `customer_context`), and their earlier conversations on every channel in this
 * workspace, each a link that opens it (GET /v1/sessions/{id}/history). Everything the customer gave is shown as text.
 */
/** @import * as Api from './api-types' */
import { api } from './api.js';
import { h, replace } from './dom.js';
import { formatTime, isTimeZone, when } from './time.js';
import { CHANNELS, fromWords } from './words.js';

/** The local time is shown to the minute; redrawn this often. */
const CLOCK_MS = 20_000;

/** What the channel's id is called. @type {Record<string, string>} */
const CHANNEL_ID = { phone: 'Phone number', whatsapp: 'WhatsApp id', webchat: 'Chat id' };

/**
 * @param {string} sessionId the open conversation
 * @param {AbortSignal} signal ends the clock and the reads when the page is left
 */
export function customerPanel(sessionId, signal) {
  const facts = h('dl', { class: 'facts', 'data-testid': 'customer-facts' });
  const earlier = h('div', { 'aria-live': 'polite' }, h('p', { class: 'hint' }, 'Looking for earlier conversations…'));
  const el = h('section', { class: 'card customer-panel', 'aria-labelledby': 'customer-panel-title', 'data-testid': 'customer-panel' },
    h('h2', { id: 'customer-panel-title' }, 'Customer'), facts,
    h('h3', { id: 'customer-history-title' }, 'Earlier conversations'), earlier);
  /** @type {Api.GetSessionsId['customer_context'] | null} */
  let context = null;
  let shown = '';
  const clock = setInterval(() => {
    for (const out of facts.querySelectorAll('[data-time-zone]')) out.textContent = localTime(out.getAttribute('data-time-zone') ?? '');
  }, CLOCK_MS);
  signal.addEventListener('abort', () => clearInterval(clock), { once: true });

  /** @type {Promise<Api.GetSessionsIdHistory | null>} */ (api('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/history`, { signal })).then(
    (answer) => {
      if (signal.aborted) return;
      const list = Array.isArray(answer?.conversations) ? answer.conversations : [];
      replace(earlier, list.length === 0
        ? h('p', { class: 'empty' }, 'None found: no other conversation in this workspace has this customer’s number, email or WhatsApp id.')
        : h('ul', { class: 'plain history', 'aria-labelledby': 'customer-history-title' }, list.map(earlierRow)));
    },
    () => {
      if (!signal.aborted) replace(earlier, h('p', { class: 'hint' }, 'Earlier conversations could not be read; reload the page to try again.'));
    },
  );

  return {
    el,
    /** The conversation as GET /v1/sessions/{id} answered it; redrawn only when its customer facts changed. @param {Api.GetSessionsId | null} s */
    show(s) {
      context = s?.customer_context ?? null;
      const key = JSON.stringify([s?.channel, context]);
      if (key === shown) return;
      shown = key;
      if (!context) {
        replace(facts, fact('Details', 'Not known.'));
        return;
      }
      const c = context;
      replace(facts,
        c.channel_id ? fact(CHANNEL_ID[String(s?.channel)] ?? 'Id', c.channel_id, 'channel-id') : null,
        fact('Name', c.name || 'Not given', 'name'),
        c.email ? fact('Email', c.email, 'email') : null,
        c.phone && c.phone !== c.channel_id ? fact('Phone', c.phone, 'phone') : null,
        c.page_url ? fact('Started on the page', pageLink(c.page_url), 'page-url') : null,
        fact('Language', languageName(c.language), 'language'),
        fact('Local time', c.time_zone
          ? [h('span', { 'data-time-zone': c.time_zone }, localTime(c.time_zone)), h('span', { class: 'meta' }, ` (${c.time_zone}${c.time_zone_source === 'browser' ? ', from their browser' : ', from their number'})`)]
          : 'Not known', 'local-time'));
    },
  };
}

/** @param {Api.GetSessionsIdHistory['conversations'][number]} c an earlier conversation */
function earlierRow(c) {
  const last = c.last_message;
  return h('li', {},
    h('a', { href: `/dashboard/inbox/${encodeURIComponent(c.id)}`, 'data-link': true, 'data-testid': 'earlier-conversation' },
      `${CHANNELS[c.channel] ?? String(c.channel)}, ${when(c.started_at)}`),
    c.answered_by ? h('span', { class: 'meta' }, ` · answered by ${c.answered_by.name || c.answered_by.email}`) : null,
    last ? h('p', { class: 'preview' }, `${fromWords(last)}: ${last.text ?? '(no words: a button)'}`) : null);
}

/** The page as a link, opened apart; only an http(s) URL (the API keeps no other). @param {string} url */
function pageLink(url) {
  return /^https?:\/\//i.test(url) ? h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, url) : url;
}

/** "14:05, Saturday" in the customer's zone; empty when the browser does not know the zone. @param {string} zone */
function localTime(zone) {
  return isTimeZone(zone) ? formatTime(new Date(), { timeZone: zone, hour: '2-digit', minute: '2-digit', weekday: 'long' }) : '';
}

/** "Dutch (nl)". @param {string | null | undefined} tag */
function languageName(tag) {
  if (!tag) return 'Not known';
  try {
    const name = new Intl.DisplayNames(['en'], { type: 'language' }).of(tag);
    return name && name !== tag ? `${name} (${tag})` : tag;
  } catch {
    return tag;
  }
}

/** @param {string} term @param {import('./dom.js').Child | import('./dom.js').Child[]} value @param {string} [testid] */
function fact(term, value, testid) {
  return h('div', {}, h('dt', {}, term), h('dd', testid ? { 'data-testid': `customer-${testid}` } : {}, value));
}
