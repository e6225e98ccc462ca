// @ts-check
/**
 * The inbox's live side for the whole dashboard, whatever screen is open: one stream of inbox changes
 * (GET /v1/inbox/events) per signed-in tab, the number of waiting customers in the navigation's badge and the tab's
 * title, a browser notification when a customer starts waiting (only once the user allowed it, with a button on the
 * Inbox screen: never asked on load), and the changes handed to the screen that listens: conversations, @mentions of
 * you, and colleagues becoming available, away or offline (`presence`).
 */
import { api, followEvents } from './api.js';

/** When the stream fails, the count is read again this often until it is back. */
const RETRY_MS = 5_000;
/** Changes that come in a burst are counted once. */
const RECOUNT_DELAY_MS = 250;

/** @import * as Api from './api-types' */
/**
 * The inbox stream's `conversation` event (GET /v1/inbox/events; the OpenAPI document describes a stream's events in
 * words only).
 * @typedef {{ id: string, channel?: string, reason?: string, handled_by?: string, agent?: import('./words.js').Agent | null, waiting_since?: string | null, last_message?: { from: string, text: string | null, at: string } | null, assigned_to?: { user_id: string, name: string } | null }} InboxChange
 */
/** The inbox stream's `mention` event (src/inbox/notes.ts, MentionEvent). @typedef {{ note_id?: string, session_id?: string, by?: { user_id?: string, name?: string }, text?: string, at?: string }} Mention */
/** A waiting conversation: its id and since when it waits, from GET /v1/inbox or the stream's changes since. @typedef {{ id: string, waiting_since?: string | null }} Waiting */

/** @type {Set<(change: InboxChange) => void>} */
const listeners = new Set();
/** Listeners for a colleague's @mention of the signed-in user (`mention` events). @type {Set<(mention: Mention) => void>} */
const mentionListeners = new Set();
/** @typedef {{ user_id: string, name: string, status: 'available' | 'away' | 'offline' }} PresenceChange */
/** Listeners for the presence of the workspace's people (`presence` events). @type {Set<(change: PresenceChange) => void>} */
const presenceListeners = new Set();
/** Conversations waiting now, by id (null until the first count). @type {Map<string, Waiting> | null} */
let waiting = null;
let titleBase = 'Botlink';
/** @type {AbortController | null} */
let running = null;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let recountTimer;

/** Starts the stream for the signed-in user (again after a sign-in); harmless when it runs. */
export function startInboxLive() {
  if (running) return;
  const abort = new AbortController();
  running = abort;
  waiting = null;
  void recount(abort.signal);
  void follow(abort.signal);
}

/** Stops the stream and forgets the count (sign-out). */
export function stopInboxLive() {
  running?.abort();
  running = null;
  waiting = null;
  clearTimeout(recountTimer);
  showCount();
}

/** A screen's listener for every inbox change; returns what removes it. @param {(change: InboxChange) => void} listener */
export function onInboxChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** A listener for a colleague's note that @mentions the signed-in user; returns what removes it. @param {(mention: Mention) => void} listener */
export function onMention(listener) {
  mentionListeners.add(listener);
  return () => mentionListeners.delete(listener);
}

/**
 * A listener for a person of the workspace becoming available, away or offline (yourself included: set elsewhere, or
 * lapsed without a dashboard open); returns what removes it.
 * @param {(change: PresenceChange) => void} listener
 */
export function onPresence(listener) {
  presenceListeners.add(listener);
  return () => presenceListeners.delete(listener);
}

/** The tab's title: the screen's own, after the number waiting when there is one. @param {string} title */
export function setTitle(title) {
  titleBase = title;
  showCount();
}

/** The conversations waiting now, as last counted (presence.js marks those past the first-reply target). */
export function waitingConversations() {
  return [...(waiting?.values() ?? [])];
}

/** How many customers wait for a person now (0 before the first count). */
export function waitingCount() {
  return waiting?.size ?? 0;
}

/** Whether the browser can notify, and the user's answer so far. @returns {'unsupported' | NotificationPermission} */
export function notificationPermission() {
  return typeof Notification === 'function' ? Notification.permission : 'unsupported';
}

/** Asks the browser for permission to notify (from a button press: browsers ignore it otherwise). */
export async function askToNotify() {
  if (typeof Notification !== 'function') return 'unsupported';
  return Notification.requestPermission();
}

/** @param {AbortSignal} signal */
async function follow(signal) {
  await followEvents('/v1/inbox/events', {
    signal,
    retryMs: RETRY_MS,
    onEvent: (type, data) => {
      if (!data || typeof data !== 'object') return;
      if (type === 'conversation' && 'id' in data && typeof data.id === 'string') changed(/** @type {InboxChange} */ (data), signal);
      else if (type === 'mention') for (const listener of mentionListeners) listener(/** @type {Mention} */ (data));
      else if (type === 'presence' && 'user_id' in data && typeof data.user_id === 'string') for (const listener of presenceListeners) listener(/** @type {PresenceChange} */ (data));
    },
    // Signed out (the 401 handler ends the sign-in) or not allowed: followEvents stops. After a gap, what changed
    // while the stream was down: the waiting count, and colleagues' presence.
    onGap: () => {
      void recount(signal);
      void rereadPresence(signal);
    },
  });
}

/** After a gap in the stream, every person's presence as it is now, to the screens that show it. @param {AbortSignal} signal */
async function rereadPresence(signal) {
  if (presenceListeners.size === 0) return;
  try {
    /** @type {Api.GetTeamPresence} */
    const { users } = await api('GET', '/v1/team/presence', { signal });
    if (signal.aborted || !Array.isArray(users)) return;
    for (const user of users) {
      if (!user || typeof user.id !== 'string') continue;
      /** @type {PresenceChange} */
      const change = { user_id: user.id, name: user.name, status: user.status };
      for (const listener of presenceListeners) listener(change);
    }
  } catch {
    // The next gap reads it again; the stream's own events keep it current meanwhile.
  }
}

/** @param {InboxChange} change @param {AbortSignal} signal */
function changed(change, signal) {
  const before = waiting;
  if (before && change.handled_by === 'waiting' && !before.has(change.id)) void notifyWithWords(change, signal);
  if (before) {
    if (change.handled_by === 'waiting') before.set(change.id, { ...before.get(change.id), ...change });
    else if (change.handled_by) before.delete(change.id);
    showCount();
  }
  for (const listener of listeners) listener(change);
  // The count from the server as well, a moment later: a conversation closed on another engine says so too, but the
  // stored list is the truth.
  clearTimeout(recountTimer);
  recountTimer = setTimeout(() => void recount(signal), RECOUNT_DELAY_MS);
}

/** @param {AbortSignal} signal */
async function recount(signal) {
  try {
    /** @type {Api.GetInbox} */
    const answer = await api('GET', '/v1/inbox?view=waiting', { signal });
    if (signal.aborted) return;
    waiting = new Map((answer.conversations ?? []).map((c) => [c.id, c]));
    showCount();
  } catch {
    // The badge keeps its last number; the next change or retry counts again.
  }
}

function showCount() {
  const n = waitingCount();
  document.title = n > 0 ? `(${n}) ${titleBase}` : titleBase;
  for (const badge of document.querySelectorAll('[data-waiting-count]')) {
    badge.textContent = n > 0 ? String(n) : '';
    badge.toggleAttribute('hidden', n === 0);
  }
  for (const words of document.querySelectorAll('[data-waiting-words]')) words.textContent = n > 0 ? ` (${n} waiting)` : '';
}

/**
 * The notification says the customer's own words: the change may carry the bot's sentence (or none), so the waiting
 * row is read for them (GET /v1/inbox `customer_last_message`).
 * @param {InboxChange} change @param {AbortSignal} signal
 */
async function notifyWithWords(change, signal) {
  if (notificationPermission() !== 'granted') return;
  /** @type {string | null} */
  let words = change.last_message?.from === 'customer' && change.last_message.text ? String(change.last_message.text) : null;
  try {
    /** @type {Api.GetInbox} */
    const answer = await api('GET', '/v1/inbox?view=waiting', { signal });
    const row = answer.conversations?.find((c) => c.id === change.id);
    if (row?.customer_last_message?.text) words = String(row.customer_last_message.text);
  } catch {
    // Notified without the words: the row shows them.
  }
  if (!signal.aborted) notify(change, words);
}

/** @param {InboxChange} change @param {string | null} words the customer's last words */
function notify(change, words) {
  const text = words ? `“${words}”` : 'Someone asked for a person.';
  try {
    const note = new Notification('A customer is waiting', { body: text.slice(0, 140), tag: `botlink-waiting-${change.id}` });
    note.addEventListener('click', () => {
      window.focus();
      const link = document.createElement('a');
      link.href = `/dashboard/inbox/${encodeURIComponent(change.id)}`;
      link.dataset.link = '';
      link.hidden = true;
      document.body.append(link);
      link.click();
      link.remove();
    });
  } catch {
    // Some browsers allow notifications from a service worker only: the badge and the title still say it.
  }
}
