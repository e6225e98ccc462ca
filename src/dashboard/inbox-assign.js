// @ts-check
/**
 * "Assign to…" in an open conversation (docs/architecture.md, "Presence and assignment"): who a waiting conversation is
 * assigned to, and a choice of colleagues (with their status, kept current by the inbox stream's presence changes) to
 * assign it to, available or not. Take over stays open to anyone.
 */
/** @import * as Api from './api-types' */
import { api } from './api.js';
import { errorBox, h, replace } from './dom.js';
import { onPresence } from './inbox-live.js';

const STATUS_WORDS = { available: 'available', away: 'away', offline: 'offline' };

/** A colleague as the choice names them. @param {{ name: string, status: string }} u */
const optionWords = (u) => `${u.name} (${STATUS_WORDS[/** @type {keyof typeof STATUS_WORDS} */ (u.status)] ?? u.status})`;

/**
 * @param {string} sessionId
 * @param {() => void | Promise<void>} onAssigned reads the conversation again
 * @param {AbortSignal} signal the conversation's page closed: stop following the team's presence
 */
export function assignControl(sessionId, onAssigned, signal) {
  const el = h('div', { class: 'assign', 'data-testid': 'assign' });
  const error = errorBox();
  /** @type {Promise<NonNullable<Api.GetTeamPresence['users']>> | null} */
  let team = null;
  let shownKey = '';
  // A colleague's status changes as it happens: the choice says it at once (the list is read again when it is drawn).
  const stopPresence = onPresence((change) => {
    team = null;
    const option = /** @type {HTMLOptionElement | null} */ (el.querySelector(`option[value="${CSS.escape(change.user_id)}"]`));
    if (option) option.textContent = optionWords(change);
  });
  signal.addEventListener('abort', () => stopPresence(), { once: true });

  /** @param {Api.GetSessionsId} s the session (GET /v1/sessions/{id}) @param {HTMLElement} container */
  function show(s, container) {
    container.append(el);
    const key = `${s.handled_by}|${s.assigned_to?.user_id ?? ''}`;
    if (key === shownKey) return;
    shownKey = key;
    const who = h('p', { 'data-testid': 'assigned-to' }, s.assigned_to ? `Assigned to ${s.assigned_to.name}` : 'Assigned to nobody yet');
    if (s.handled_by !== 'waiting') {
      replace(el, s.handled_by === 'agent' ? null : who);
      return;
    }
    const select = /** @type {HTMLSelectElement} */ (h('select', { id: `assign-${sessionId}` }, h('option', { value: '' }, 'Choose a colleague')));
    const button = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', class: 'quiet' }, 'Assign'));
    replace(el, who, h('div', { class: 'row' }, h('label', { for: `assign-${sessionId}` }, 'Assign to'), select, button), error.el);
    team ??= /** @type {Promise<Api.GetTeamPresence>} */ (api('GET', '/v1/team/presence')).then((answer) => answer.users ?? []);
    team.then((users) => {
      for (const u of users) select.append(h('option', { value: u.id, selected: u.id === s.assigned_to?.user_id ? true : null }, optionWords(u)));
    }, (err) => error.show(err));
    button.addEventListener('click', async () => {
      if (!select.value) {
        select.focus();
        return;
      }
      button.disabled = true;
      error.clear();
      try {
        await api('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/assign`, { body: { user_id: select.value } });
        await onAssigned();
      } catch (err) {
        error.show(err);
      } finally {
        button.disabled = false;
      }
    });
  }

  return { show };
}
