// @ts-check
/**
 * Your presence, in the header (docs/architecture.md, "Presence and assignment"): Available (you take waiting
 * conversations, and customers are told a colleague will reply), Away or Offline. Available holds while a dashboard of
 * yours is open; a change made elsewhere (another tab, a lapse) shows here as it happens. Also here, because they follow the inbox's stream on every screen: the number of conversations
 * waiting past the first-reply target beside the Inbox's badge, and a word when a conversation is assigned to you.
 */
/** @import * as Api from './api-types' */
import { api, currentSession } from './api.js';
import { h } from './dom.js';
import { notificationPermission, onInboxChange, onPresence, waitingConversations } from './inbox-live.js';

const CHOICES = [
  { value: 'available', label: 'Available' },
  { value: 'away', label: 'Away' },
  { value: 'offline', label: 'Offline' },
];
/** The overdue count is looked at this often between changes (the waits grow while nothing changes). */
const OVERDUE_TICK_MS = 15_000;

/** The header's presence control: a labelled select, saved on change. */
export function presenceControl() {
  const select = /** @type {HTMLSelectElement} */ (h('select', { id: 'presence-status', 'data-testid': 'presence' }, CHOICES.map((c) => h('option', { value: c.value }, c.label))));
  const status = h('span', { class: 'sr-only', role: 'status' });
  const wrap = h('div', { class: 'presence' }, h('label', { for: 'presence-status' }, 'Your status'), select, status);
  select.disabled = true;
  void /** @type {Promise<Api.GetMePresence>} */ (api('GET', '/v1/me/presence')).then(
    (answer) => {
      select.value = String(answer.status);
      select.disabled = false;
      wrap.dataset.status = select.value;
    },
    () => {
      select.disabled = false;
    },
  );
  // Your status changed elsewhere: in another tab, by PUT /v1/team, or "Available" lapsed without a dashboard open.
  // The header is drawn again on every screen: an old control stops listening at the first change after it left.
  const stop = onPresence((change) => {
    if (!wrap.isConnected) return void stop();
    if (change.user_id !== currentSession()?.userId || select.disabled || select.value === change.status) return;
    select.value = change.status;
    wrap.dataset.status = change.status;
    status.textContent = `Your status is now ${CHOICES.find((c) => c.value === change.status)?.label ?? change.status}.`;
  });
  select.addEventListener('change', async () => {
    const wanted = select.value;
    select.disabled = true;
    try {
      /** @type {Api.PutMePresence} */
      const answer = await api('PUT', '/v1/me/presence', { body: { status: wanted } });
      select.value = String(answer.status);
      wrap.dataset.status = select.value;
      status.textContent = `Your status is ${CHOICES.find((c) => c.value === answer.status)?.label ?? answer.status}.`;
    } catch {
      status.textContent = 'Your status could not be saved; try again.';
    } finally {
      select.disabled = false;
    }
  });
  return wrap;
}

let watching = false;
/** @type {number | undefined} */
let targetMinutes;

/**
 * While signed in: the overdue count beside the Inbox's badge, and a word (and a browser notification, when allowed)
 * when a conversation is assigned to you. Started once; it follows whatever screen is open.
 */
export function watchTeam() {
  if (watching) return;
  watching = true;
  void /** @type {Promise<Api.GetInboxSettings>} */ (api('GET', '/v1/inbox/settings')).then((s) => {
    targetMinutes = Number(s.first_reply_target_minutes) || undefined;
    showOverdue();
  }, () => {});
  setInterval(showOverdue, OVERDUE_TICK_MS);
  onInboxChange((change) => {
    setTimeout(showOverdue, 1_200);
    const me = currentSession()?.userId;
    if (change.reason !== 'assigned' || !me || change.assigned_to?.user_id !== me) return;
    tellAssigned(change.id);
  });
}

/** The conversations waiting past the first-reply target, beside the Inbox's badge (seen and heard). */
function showOverdue() {
  if (!currentSession() || targetMinutes === undefined) return;
  const limit = Date.now() - targetMinutes * 60_000;
  const n = waitingConversations().filter((c) => c.waiting_since && Date.parse(c.waiting_since) < limit).length;
  for (const badge of document.querySelectorAll('[data-overdue-count]')) {
    badge.textContent = n > 0 ? `${n} late` : '';
    badge.toggleAttribute('hidden', n === 0);
  }
  for (const words of document.querySelectorAll('[data-overdue-words]')) words.textContent = n > 0 ? ` (${n} waiting longer than ${targetMinutes} minutes)` : '';
}

/** @param {string} sessionId */
function tellAssigned(sessionId) {
  const href = `/dashboard/inbox/${encodeURIComponent(sessionId)}`;
  let box = document.getElementById('assigned-to-you');
  if (!box) {
    box = h('div', { id: 'assigned-to-you', class: 'assigned-note', role: 'status' });
    document.getElementById('top')?.after(box);
  }
  box.replaceChildren(h('span', {}, 'A waiting conversation was assigned to you. '), h('a', { href, 'data-link': true }, 'Open it'));
  if (notificationPermission() === 'granted' && document.visibilityState !== 'visible') {
    const note = new Notification('Assigned to you', { body: 'A waiting conversation was assigned to you.', tag: `assigned-${sessionId}` });
    note.onclick = () => {
      window.focus();
      location.assign(href);
    };
  }
}
