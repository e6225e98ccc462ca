// @ts-check
/** Team: the availability switch (whether a phone handoff connects a person) and the follow-ups for the team. */
import { ApiError, api, isManager } from './api.js';
import { busy, errorBox, h, loading, replace, when } from './dom.js';

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderTeam(main, ctx) {
  const toggle = h('button', { type: 'button', role: 'switch', 'aria-checked': 'false', class: 'switch', id: 'team-switch', 'aria-describedby': 'team-switch-state' },
    h('span', { class: 'knob', 'aria-hidden': 'true' }), h('span', {}, 'The team is available'));
  const state = h('p', { id: 'team-switch-state', class: 'hint', role: 'status' }, isManager(ctx.session) ? 'Reading the current setting…' : '');
  const switchError = errorBox();
  const notifications = h('div', { 'aria-busy': 'true' }, loading('Loading notifications…'));
  const listError = errorBox();
  replace(main,
    h('h1', {}, 'Team'),
    h('section', { class: 'card prominent', 'aria-labelledby': 'availability' },
      h('h2', { id: 'availability' }, 'Availability'),
      h('p', {}, 'While the team is available, a caller who asks for a person on the phone is put through (within the team hours, when set). Otherwise the call ends with a promise to follow up, and a notification appears below.'),
      // The API lets owners and admins turn the switch (PUT /v1/team answers 403 to agents, and agents may not
      // read the phone settings that hold its position), so an agent is told whom to ask instead of a dead control.
      isManager(ctx.session) ? [toggle, state, switchError.el] : h('p', { class: 'notice' }, 'Only an owner or admin of the workspace can turn the team switch on or off. Ask one of them when you start or stop taking calls.')),
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
        show(Boolean(saved.available));
      } catch (err) {
        switchError.show(err instanceof ApiError && err.status === 403 ? 'Only an owner or admin of the workspace may change the team switch; ask one of them.' : err);
      }
    });
  });

  let stopped = false;
  // The phone settings carry the switch's current position (owners and admins may read them).
  if (isManager(ctx.session)) {
    api('GET', '/v1/phone').then((p) => !stopped && show(Boolean(p.team_available), p.available_now), (err) => !stopped && switchError.show(err));
  }
  api('GET', '/v1/notifications').then(
    (answer) => {
      if (stopped) return;
      notifications.setAttribute('aria-busy', 'false');
      replace(notifications, answer.notifications.length === 0
        ? h('p', { class: 'empty' }, 'No notifications. Forwarded questions and handoffs that could not reach a person appear here for a follow-up.')
        : h('ul', { class: 'notes' }, answer.notifications.map((/** @type {any} */ n) => h('li', { class: n.read_at ? '' : 'unread' },
          h('p', { class: 'meta' }, `${String(n.kind).replaceAll('_', ' ')} · ${when(n.created_at)}`),
          h('p', {}, String(n.message)),
          n.session_id ? h('a', { href: `/dashboard/conversations/${encodeURIComponent(n.session_id)}`, 'data-link': true }, 'Open the conversation') : null))));
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
