// @ts-check
/**
 * The Inbox (docs/api-tour.md, "The team's side"): the conversations a person should look at, in four views. Waiting
 * (a customer asked for a person and nobody took it yet; oldest first, the wait ticking), Mine (held by you), All open
 * (every open WhatsApp and website chat), Follow-ups (the team follows up; the bot keeps answering). Each row says
 * who the customer is, the channel, a preview of the last message and who holds it. Live through the inbox's stream.
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetInbox['conversations']>[number]} Row */
import { api } from './api.js';
import { errorBox, h, loading, replace } from './dom.js';
import { askToNotify, notificationPermission, onInboxChange } from './inbox-live.js';
import { CHANNELS, conversationName, fromWords, holderWords, waitedFor } from './words.js';

/** Without the stream (a proxy that buffers it), the list is still read this often. */
const POLL_MS = 15_000;
/** The live changes of a burst redraw the list once. */
const REDRAW_DELAY_MS = 200;

const VIEWS = [
  { view: 'waiting', label: 'Waiting', empty: 'Nobody is waiting for a person right now. When a customer asks for one, the conversation appears here.' },
  { view: 'mine', label: 'Mine', empty: 'You hold no conversation. Take one over from Waiting or All open.' },
  { view: 'open', label: 'All open', empty: 'No open WhatsApp or website chat conversation.' },
  { view: 'followups', label: 'Follow-ups', empty: 'No follow-up: nothing was forwarded to the team.' },
];

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} _ctx */
export function renderInbox(main, _ctx) {
  const wanted = new URLSearchParams(location.search).get('view');
  const current = VIEWS.find((v) => v.view === wanted) ?? VIEWS[0];
  const list = h('div', { class: 'list', 'aria-busy': 'true' }, loading('Loading the inbox…'));
  const announce = h('p', { class: 'sr-only', role: 'status' });
  const error = errorBox();
  const tabs = h('nav', { 'aria-label': 'Inbox views', class: 'views' },
    h('ul', {}, VIEWS.map((v) => h('li', {}, h('a', { href: `/dashboard/inbox?view=${v.view}`, 'data-link': true, 'aria-current': v === current ? 'page' : null }, v.label)))));
  replace(main, h('h1', {}, 'Inbox'), notifyControl(), tabs, announce, error.el, list);

  let stopped = false;
  let shown = '';
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let soon;
  async function refresh() {
    clearTimeout(timer);
    try {
      /** @type {Api.GetInbox} */
      const answer = await api('GET', `/v1/inbox?view=${current.view}`);
      if (stopped) return;
      error.clear();
      const conversations = answer.conversations ?? [];
      const fingerprint = JSON.stringify(conversations);
      if (fingerprint !== shown) {
        if (shown) announce.textContent = `${current.label}: ${conversations.length} ${conversations.length === 1 ? 'conversation' : 'conversations'}.`;
        shown = fingerprint;
        replace(list, conversations.length === 0 ? h('p', { class: 'empty' }, current.empty) : h('ul', { class: 'sessions inbox' }, conversations.map(row)));
        tick();
      }
      list.setAttribute('aria-busy', 'false');
    } catch (err) {
      if (!stopped) error.show(err);
    }
    if (!stopped) timer = setTimeout(() => void refresh(), POLL_MS);
  }
  // The waits tick every second without a redraw.
  function tick() {
    for (const el of list.querySelectorAll('[data-waiting-since]')) el.textContent = waitedFor(el.getAttribute('data-waiting-since'));
  }
  const ticking = setInterval(tick, 1_000);
  const unsubscribe = onInboxChange(() => {
    clearTimeout(soon);
    soon = setTimeout(() => void refresh(), REDRAW_DELAY_MS);
  });
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
    clearTimeout(soon);
    clearInterval(ticking);
    unsubscribe();
  };
}

/** The button that asks the browser for notifications, shown while the user has not answered yet. */
function notifyControl() {
  const permission = notificationPermission();
  if (permission === 'unsupported') return null;
  const status = h('p', { class: 'hint', role: 'status' });
  if (permission === 'granted') {
    status.textContent = 'This browser notifies you when a customer starts waiting.';
    return h('div', { class: 'row notify' }, status);
  }
  if (permission === 'denied') {
    status.textContent = "Notifications are blocked in this browser's site settings; the number in the menu and in the tab's title still shows who waits.";
    return h('div', { class: 'row notify' }, status);
  }
  const button = h('button', { type: 'button', class: 'quiet' }, 'Notify me when a customer waits');
  button.addEventListener('click', async () => {
    const answer = await askToNotify();
    button.remove();
    status.textContent = answer === 'granted' ? 'Done: this browser notifies you when a customer starts waiting.' : 'Notifications stay off; the number in the menu still shows who waits.';
  });
  return h('div', { class: 'row notify' }, button, status);
}

/** @param {Row} c an inbox conversation */
function row(c) {
  const last = c.last_message;
  return h('li', {},
    h('a', { href: `/dashboard/inbox/${encodeURIComponent(c.id)}`, 'data-link': true, class: 'session', 'data-testid': 'inbox-row' },
      h('span', { class: 'who' }, conversationName(c)),
      h('span', { class: 'meta' }, CHANNELS[c.channel] ?? String(c.channel)),
      c.handled_by === 'waiting'
        ? h('span', { class: 'badge warn' }, 'Waiting ', h('span', { 'data-waiting-since': c.waiting_since ?? '' }, waitedFor(c.waiting_since)))
        : h('span', { class: `badge ${c.handled_by === 'agent' ? 'live' : ''}` }, holderWords(c)),
      // Assignment and the first-reply target (presence.js; docs/architecture.md, "Presence and assignment").
      c.handled_by === 'waiting' && c.assigned_to ? h('span', { class: 'meta assigned', 'data-testid': 'assigned-to' }, `Assigned to ${c.assigned_to.name}`) : null,
      c.overdue ? h('span', { class: 'badge late', 'data-testid': 'overdue' }, 'Over the reply target') : null,
      saidLine(c),
      last?.from === 'customer' && c.customer_last_message ? null : h('span', { class: 'preview' }, last ? `${fromWords(last)}: ${last.text ?? '(no words: a button)'}` : 'No message yet.')));
}

/** The customer's own last words, first on the row: the bot's sentence after them tells an agent nothing. @param {Row} c */
function saidLine(c) {
  const said = c.customer_last_message;
  return said ? h('span', { class: 'said', 'data-testid': 'customer-words' }, h('strong', {}, 'Customer: '), String(said.text)) : null;
}
