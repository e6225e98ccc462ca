// @ts-check
/**
 * Team: who of the team is available now (each person sets their own status in the header, presence.js; the old
 * switch is gone from here, PUT /v1/team stays for API clients), kept current by the inbox stream's presence changes,
 * and the follow-ups for the team.
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetNotifications['notifications']>[number]} TeamNotification */
import { api, currentSession, isManager } from './api.js';
import { busy, errorBox, h, loading, replace } from './dom.js';
import { onPresence } from './inbox-live.js';
import { when } from './time.js';
import { notificationKindWords } from './words.js';

/** @type {Set<string | null | undefined>} */
const ENDPOINT_KINDS = new Set(['endpoint_down', 'endpoint_recovered']);
/** @type {Set<string | null | undefined>} */
const CHATS = new Set(['webchat', 'whatsapp']);

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} _ctx */
export function renderTeam(main, _ctx) {
  const state = h('p', { class: 'hint', role: 'status' }, 'Reading who is available…');
  const people = h('ul', { class: 'plain', 'data-testid': 'team-presence' });
  const switchError = errorBox();
  const notifications = h('div', { 'aria-busy': 'true' }, loading('Loading notifications…'));
  const listError = errorBox();
  replace(main,
    h('h1', {}, 'Team'),
    h('section', { class: 'card prominent', 'aria-labelledby': 'availability' },
      h('h2', { id: 'availability' }, 'Availability'),
      h('p', {}, 'While someone of the team is available (within the team hours, when set), a customer who asks for a person is told a colleague will reply, and a caller is put through. Otherwise they are told the team is away, and a notification appears below. Set your own status at the top of the page; Available turns to Away after a few minutes without a dashboard open.'),
      state, people, switchError.el),
    h('section', { 'aria-labelledby': 'notes' }, h('h2', { id: 'notes' }, 'Notifications'), listError.el, notifications));

  const STATUS = { available: 'Available', away: 'Away', offline: 'Offline' };
  let stopped = false;
  /** The team as last shown. @type {{ id: string, name: string, status: string }[]} */
  let users = [];
  /** What a customer is told now, from GET /v1/team. @param {Api.GetTeam} team */
  const showState = (team) => {
    state.textContent = team.available_now
      ? 'Now: a customer who asks for a person is told a colleague will reply.'
      : team.available ? 'Now: outside the team hours, so customers are told until when the team is away.' : 'Now: nobody is available, so customers are told the team is away.';
  };
  const showPeople = () => replace(people, users.map((u) => h('li', {}, `${u.name}: ${STATUS[/** @type {keyof typeof STATUS} */ (u.status)] ?? u.status}`)));
  const readTeam = () => Promise.all([/** @type {Promise<Api.GetTeam>} */ (api('GET', '/v1/team')), /** @type {Promise<Api.GetTeamPresence>} */ (api('GET', '/v1/team/presence'))]).then(([team, presence]) => {
    if (stopped) return;
    showState(team);
    users = presence.users ?? [];
    showPeople();
  }, (err) => !stopped && switchError.show(err));
  void readTeam();
  // A colleague's status changes as it happens (the inbox stream's presence event); what customers are told follows it.
  const stopPresence = onPresence((change) => {
    const known = users.find((u) => u.id === change.user_id);
    if (!known) return void readTeam();
    known.status = change.status;
    showPeople();
    /** @type {Promise<Api.GetTeam>} */ (api('GET', '/v1/team')).then((team) => !stopped && showState(team), () => {});
  });
  /** @type {Promise<Api.GetNotifications>} */ (api('GET', '/v1/notifications')).then(
    (answer) => {
      if (stopped) return;
      notifications.setAttribute('aria-busy', 'false');
      const list = answer.notifications ?? [];
      replace(notifications, list.length === 0
        ? h('p', { class: 'empty' }, 'No notifications. Forwarded questions, handoffs that could not reach a person, and your endpoint going down or coming back appear here.')
        : h('ul', { class: 'notes' }, list.map((n) => h('li', { class: n.read_at ? '' : 'unread' },
          h('p', { class: 'meta' }, h('strong', {}, notificationKindWords(String(n.kind), n.channel)), ` · ${when(n.created_at)}`),
          h('p', {}, String(n.message)),
          // A chat is answered in the Inbox; a call's record is under Conversations.
          n.session_id ? h('a', { href: `/dashboard/${CHATS.has(n.channel) ? 'inbox' : 'conversations'}/${encodeURIComponent(n.session_id)}`, 'data-link': true }, 'Open the conversation', n.label ? `: ${String(n.label)}` : '') : null,
          // The endpoint's own notifications belong to no conversation: they lead to its health (owners and admins).
          ENDPOINT_KINDS.has(n.kind) && isManager(currentSession()) ? h('p', {}, h('a', { href: '/dashboard/integration', 'data-link': true }, 'See the endpoint’s health')) : null,
          n.read_at ? h('p', { class: 'hint' }, `Done ${when(n.read_at)}`)
            : CHATS.has(n.channel) && n.answered_by_team ? h('p', { class: 'hint' }, 'Answered in the chat by the team.') : markDone(n)))));
    },
    (err) => {
      if (stopped) return;
      replace(notifications);
      listError.show(err);
    },
  );
  return () => {
    stopped = true;
    stopPresence();
  };
}

/** The "Mark done" button of a notification still to follow up (POST /v1/notifications/{id}/read). */
function markDone(/** @type {TeamNotification} */ n) {
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
