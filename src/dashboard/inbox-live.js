// @ts-check
/**
 * The inbox's live side for the whole dashboard, whatever screen is open: one stream of inbox changes
 * (GET /v1/inbox/events) per signed-in tab, the number of waiting customers in the navigation's badge and the tab's
 * title, a browser notification when a customer starts waiting (only once the user allowed it, with a button on the
 * Inbox screen: never asked on load), and the changes handed to the screen that listens.
 */
import { ApiError, api, readEvents } from './api.js';

/** When the stream fails, the count is read again this often until it is back. */
const RETRY_MS = 5_000;
/** Changes that come in a burst are counted once. */
const RECOUNT_DELAY_MS = 250;

/** @typedef {{ id: string, channel?: string, reason?: string, handled_by?: string, agent?: any, waiting_since?: string | null, last_message?: { from: string, text: string | null, at: string } | null }} InboxChange */

/** @type {Set<(change: InboxChange) => void>} */
const listeners = new Set();
/** Conversations waiting now, by id (null until the first count). @type {Map<string, any> | null} */
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

/** The tab's title: the screen's own, after the number waiting when there is one. @param {string} title */
export function setTitle(title) {
  titleBase = title;
  showCount();
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
  while (!signal.aborted) {
    try {
      await readEvents('/v1/inbox/events', (type, data) => {
        if (type === 'conversation' && data && typeof data.id === 'string') changed(/** @type {InboxChange} */ (data), signal);
      }, signal);
    } catch (err) {
      if (signal.aborted) return;
      // Signed out (the 401 handler ends the sign-in) or not allowed: nothing to follow.
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return;
    }
    if (signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    // What changed while the stream was down.
    void recount(signal);
  }
}

/** @param {InboxChange} change @param {AbortSignal} signal */
function changed(change, signal) {
  const before = waiting;
  if (before && change.handled_by === 'waiting' && !before.has(change.id)) notify(change);
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
    const answer = await api('GET', '/v1/inbox?view=waiting', { signal });
    if (signal.aborted) return;
    waiting = new Map(answer.conversations.map((/** @type {any} */ c) => [c.id, c]));
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

/** @param {InboxChange} change */
function notify(change) {
  if (notificationPermission() !== 'granted') return;
  const text = change.last_message?.text ? String(change.last_message.text) : 'Someone asked for a person.';
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
