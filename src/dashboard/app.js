// @ts-check
/**
 * The dashboard: a small router over the History API. Every screen is a function that fills <main> and returns what
 * stops its polling or live stream when the user leaves. Owners and admins see every screen; agents see
 * Overview, Inbox, Conversations, Team and Knowledge (read-only) only (the API refuses them the rest anyway). While
 * signed in, the inbox's stream (inbox-live.js) keeps the number of waiting customers in the navigation and the tab's
 * title.
 */
/** @import * as Api from './api-types' */
import { renderAccount } from './account.js';
import { ApiError, api, clearSession, currentSession, isManager, saveSession, whenUnauthorized } from './api.js';
import { renderChannels } from './channels.js';
import { renderConversation, renderConversations } from './conversations.js';
import { h, replace } from './dom.js';
import { renderInbox } from './inbox.js';
import { renderInboxConversation } from './inbox-conversation.js';
import { setTitle, startInboxLive, stopInboxLive, waitingCount } from './inbox-live.js';
import { renderIntegration } from './integration.js';
import { renderKnowledge } from './knowledge.js';
import { renderOverview } from './overview.js';
import { presenceControl, watchTeam } from './presence.js';
import { renderPrivacy } from './privacy.js';
import { showMentions } from './inbox-reply-tools.js';
import { renderSavedReplies } from './saved-replies.js';
import { renderInvite, renderSignIn } from './signin.js';
import { renderTeam } from './team.js';
import { renderTests } from './tests.js';
import { renderUsers } from './users.js';
import { renderWebhooks } from './webhooks.js';
import { setTimeZone } from './time.js';
import { renderWorkspace } from './workspace.js';

export const BASE = '/dashboard';

/**
 * @typedef {object} ScreenContext
 * @property {import('./api.js').Session} session
 * @property {(path: string) => void} navigate
 * @property {string[]} params the path segments after the screen's own
 */
/** @typedef {(main: HTMLElement, ctx: ScreenContext) => (void | (() => void))} Screen */

/** @type {{ path: string, title: string, managers: boolean, render: Screen, menu?: false }[]} */
const SCREENS = [
  { path: 'overview', title: 'Overview', managers: false, render: renderOverview },
  { path: 'inbox', title: 'Inbox', managers: false, render: (main, ctx) => (ctx.params[0] ? renderInboxConversation(main, ctx) : renderInbox(main, ctx)) },
  { path: 'conversations', title: 'Conversations', managers: false, render: (main, ctx) => (ctx.params[0] ? renderConversation(main, ctx) : renderConversations(main, ctx)) },
  { path: 'team', title: 'Team', managers: false, render: renderTeam },
  // Every role adds saved replies; an agent changes their own (saved-replies.js).
  { path: 'saved-replies', title: 'Saved replies', managers: false, render: renderSavedReplies },
  { path: 'integration', title: 'Integration', managers: true, render: renderIntegration },
  { path: 'knowledge', title: 'Knowledge', managers: false, render: renderKnowledge },
  { path: 'tests', title: 'Tests', managers: true, render: renderTests },
  { path: 'channels', title: 'Channels', managers: true, render: renderChannels },
  { path: 'webhooks', title: 'Webhooks', managers: true, render: renderWebhooks },
  { path: 'users', title: 'Users', managers: true, render: renderUsers },
  { path: 'workspace', title: 'Workspace', managers: true, render: renderWorkspace },
  { path: 'privacy', title: 'Privacy', managers: true, render: renderPrivacy },
  // Your name and email, for every role: opened from the header, not the menu.
  { path: 'account', title: 'Your account', managers: false, render: renderAccount, menu: false },
];

const main = /** @type {HTMLElement} */ (document.getElementById('main'));
const top = /** @type {HTMLElement} */ (document.getElementById('top'));
/** @type {(() => void) | undefined} */
let leave;
let first = true;

/** @param {string} path */
function navigate(path) {
  if (path !== location.pathname + location.search) history.pushState(null, '', path);
  show();
}

function show() {
  leave?.();
  leave = undefined;
  const [screenPath = '', ...params] = location.pathname.slice(BASE.length).split('/').filter(Boolean);
  const session = currentSession();
  if (screenPath === 'invite' || screenPath === 'reset') {
    stopInboxLive();
    replace(top);
    renderInvite(main, { navigate, signedIn }, screenPath);
  } else if (!session) {
    stopInboxLive();
    replace(top);
    setTitle('Sign in · Botlink');
    renderSignIn(main, { navigate, signedIn });
  } else if (session.timeZone === undefined) {
    // A session from before the dashboard kept the workspace's time zone and your name: read them once, then show.
    void /** @type {Promise<Api.GetWorkspace | null>} */ (api('GET', '/v1/workspace')).then(
      (w) => saveSession({ ...session, timeZone: typeof w?.time_zone === 'string' ? w.time_zone : null, name: typeof w?.user?.name === 'string' ? w.user.name : null }),
      // Signed out (401) is whenUnauthorized's to show; anything else shows the browser's time until the next sign-in.
      (err) => !(err instanceof ApiError && err.status === 401) && saveSession({ ...session, timeZone: null }),
    ).then(() => currentSession()?.timeZone !== undefined && show());
    return;
  } else {
    // Every time and date in the workspace's time zone (time.js), read at sign-in, changed on the Workspace screen.
    setTimeZone(session.timeZone);
    startInboxLive();
    // Your presence, the overdue count and "assigned to you" follow the inbox's stream on every screen (presence.js).
    watchTeam();
    // A colleague's note that @mentions you shows on whatever screen is open.
    showMentions();
    // Owners and admins start on the Overview; agents on their conversations.
    const screen = SCREENS.find((s) => s.path === (screenPath || (isManager(session) ? 'overview' : 'conversations')));
    const allowed = screen && (!screen.managers || isManager(session));
    header(session, allowed ? screen.path : '');
    if (!screen || !allowed) {
      setTitle('Not found · Botlink');
      // An agent at a settings address sees no trace of the settings, only the way back.
      replace(main, h('h1', {}, 'Nothing here'), h('p', {}, 'This page does not exist or is not open to you. ', h('a', { href: `${BASE}/conversations`, 'data-link': true }, 'Go to Conversations'), '.'));
    } else {
      setTitle(`${screen.title} · Botlink`);
      leave = screen.render(main, { session, navigate, params }) ?? undefined;
    }
  }
  // After a navigation (not the first page load) focus moves to the new content, as a page load would.
  if (!first) (main.querySelector('h1') ?? main).focus();
  first = false;
}

/** @param {import('./api.js').Session} session @param {string} active */
function header(session, active) {
  const n = waitingCount();
  const links = SCREENS.filter((s) => s.menu !== false && (!s.managers || isManager(session))).map((s) =>
    h('li', {}, h('a', { href: `${BASE}/${s.path}`, 'data-link': true, 'aria-current': s.path === active ? 'page' : null }, s.title,
      // The number waiting: seen as a badge, heard as words (inbox-live.js keeps both current).
      s.path === 'inbox' ? [
        h('span', { class: 'count', 'data-waiting-count': true, 'aria-hidden': 'true', hidden: n === 0 }, n > 0 ? String(n) : ''),
        h('span', { class: 'sr-only', 'data-waiting-words': true }, n > 0 ? ` (${n} waiting)` : ''),
        h('span', { class: 'count late', 'data-overdue-count': true, 'aria-hidden': 'true', hidden: true }),
        h('span', { class: 'sr-only', 'data-overdue-words': true }),
      ] : null)),
  );
  const signOut = h('button', { type: 'button', class: 'quiet', onclick: () => void doSignOut(signOut) }, 'Sign out');
  replace(
    top,
    h('div', { class: 'brand' }, h('a', { href: `${BASE}/conversations`, 'data-link': true }, 'Botlink'), session.workspace ? h('span', { class: 'workspace' }, session.workspace) : null),
    h('nav', { 'aria-label': 'Dashboard' }, h('ul', {}, links)),
    h('div', { class: 'account' }, presenceControl(),
      h('span', {}, h('a', { href: `${BASE}/account`, 'data-link': true, 'data-account': true, title: 'Your account: your name and sign-in email', 'aria-current': active === 'account' ? 'page' : null }, session.email ?? roleName(session.role))),
      signOut),
  );
}

/** @param {import('./api.js').Role} role */
function roleName(role) {
  return role === 'manager' ? 'Owner or admin' : role[0]?.toUpperCase() + role.slice(1);
}

/** @param {HTMLButtonElement} button */
async function doSignOut(button) {
  button.disabled = true;
  try {
    await api('DELETE', '/v1/tokens/current');
  } catch {
    // Signed out here whatever the service said: a token it refuses is no sign-in either.
  }
  clearSession();
  stopInboxLive();
  navigate(BASE);
}

function signedIn() {
  const wanted = location.pathname.startsWith(`${BASE}/`) && !location.pathname.startsWith(`${BASE}/invite`) && !location.pathname.startsWith(`${BASE}/reset`) ? location.pathname : BASE;
  navigate(wanted);
}

whenUnauthorized((message) => {
  clearSession();
  stopInboxLive();
  leave?.();
  leave = undefined;
  replace(top);
  renderSignIn(main, { navigate, signedIn, notice: `You were signed out: ${message}` });
});

document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-link]') : null;
  if (!(link instanceof HTMLAnchorElement) || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});
window.addEventListener('popstate', show);
show();
