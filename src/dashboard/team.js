// @ts-check
/** Team: the availability switch (whether a phone handoff connects a person) and the follow-ups for the team. */
import { api, currentSession, isManager } from './api.js';
import { busy, errorBox, h, loading, replace, when } from './dom.js';

/** What each kind of notification is called (GET /v1/notifications `kind`). */
const KINDS = /** @type {Record<string, string>} */ ({
  forward: 'Forwarded question',
  human_followup: 'Call back',
  endpoint_down: 'Endpoint down',
  endpoint_recovered: 'Endpoint recovered',
});
const ENDPOINT_KINDS = new Set(['endpoint_down', 'endpoint_recovered']);

/** A kind's name; a kind this page does not know yet reads as its words. @param {unknown} kind */
function kindName(kind) {
  const k = String(kind);
  return KINDS[k] ?? (k.charAt(0).toUpperCase() + k.slice(1)).replaceAll('_', ' ');
}

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} _ctx */
export function renderTeam(main, _ctx) {
  const toggle = h('button', { type: 'button', role: 'switch', 'aria-checked': 'false', class: 'switch', id: 'team-switch', 'aria-describedby': 'team-switch-state' },
    h('span', { class: 'knob', 'aria-hidden': 'true' }), h('span', {}, 'The team is available'));
  const state = h('p', { id: 'team-switch-state', class: 'hint', role: 'status' }, 'Reading the current setting…');
  const switchError = errorBox();
  const notifications = h('div', { 'aria-busy': 'true' }, loading('Loading notifications…'));
  const listError = errorBox();
  replace(main,
    h('h1', {}, 'Team'),
    h('section', { class: 'card prominent', 'aria-labelledby': 'availability' },
      h('h2', { id: 'availability' }, 'Availability'),
      h('p', {}, 'While the team is available, a caller who asks for a person on the phone is put through (within the team hours, when set). Otherwise the call ends with a promise to follow up, and a notification appears below.'),
      // Every role turns it: agents are the ones who start and stop taking calls (GET and PUT /v1/team).
      toggle, state, switchError.el),
    h('section', { 'aria-labelledby': 'notes' }, h('h2', { id: 'notes' }, 'Notifications'), listError.el, notifications));

  /** @param {boolean} on @param {boolean | null} [now] */
  const show = (on, now) => {
    toggle.setAttribute('aria-checked', String(on));
    state.textContent = `${on ? 'On: calls asking for a person are put through' : 'Off: calls asking for a person are not put through'}${now == null ? '.' : now ? '; a handoff would connect right now.' : '; outside team hours a handoff would not connect now.'}`;
  };
  toggle.addEventListener('click', () => {
    switchError.clear();
    const wanted = toggle.getAttribute('aria-checked') !== 'true';
    void busy(toggle, async () => {
      try {
        const saved = await api('PUT', '/v1/team', { body: { available: wanted } });
        show(Boolean(saved.available), saved.available_now);
      } catch (err) {
        switchError.show(err);
      }
    });
  });

  let stopped = false;
  api('GET', '/v1/team').then((t) => !stopped && show(Boolean(t.available), t.available_now), (err) => !stopped && switchError.show(err));
  api('GET', '/v1/notifications').then(
    (answer) => {
      if (stopped) return;
      notifications.setAttribute('aria-busy', 'false');
      replace(notifications, answer.notifications.length === 0
        ? h('p', { class: 'empty' }, 'No notifications. Forwarded questions, handoffs that could not reach a person, and your endpoint going down or coming back appear here.')
        : h('ul', { class: 'notes' }, answer.notifications.map((/** @type {any} */ n) => h('li', { class: n.read_at ? '' : 'unread' },
          h('p', { class: 'meta' }, h('strong', {}, kindName(n.kind)), ` · ${when(n.created_at)}`),
          h('p', {}, String(n.message)),
          n.session_id ? h('a', { href: `/dashboard/conversations/${encodeURIComponent(n.session_id)}`, 'data-link': true }, 'Open the conversation') : null,
          // The endpoint's own notifications belong to no conversation: they lead to its health (owners and admins).
          ENDPOINT_KINDS.has(n.kind) && isManager(currentSession()) ? h('p', {}, h('a', { href: '/dashboard/integration', 'data-link': true }, 'See the endpoint’s health')) : null,
          n.read_at ? h('p', { class: 'hint' }, `Done ${when(n.read_at)}`) : markDone(n)))));
    },
    (err) => {
      if (stopped) return;
      replace(notifications);
      listError.show(err);
    },
  );
  return () => {
    stopped = true;
  };
}

/** The "Mark done" button of a notification still to follow up (POST /v1/notifications/{id}/read). */
function markDone(/** @type {any} */ n) {
  const failed = errorBox();
  const button = h('button', { type: 'button', class: 'secondary' }, 'Mark done');
  button.addEventListener('click', () => {
    failed.clear();
    void busy(button, async () => {
      try {
        await api('POST', `/v1/notifications/${encodeURIComponent(String(n.id))}/read`);
        const item = button.closest('li');
        item?.classList.remove('unread');
        button.replaceWith(h('p', { class: 'hint', role: 'status' }, 'Done just now'));
      } catch (err) {
        failed.show(err);
      }
    });
  });
  return h('div', {}, button, failed.el);
}
