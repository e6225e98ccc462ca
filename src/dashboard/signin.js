// @ts-check
/** Signing in: email and password, a token, or setting a password through an invite link (#<invite token>). */
/** @import * as Api from './api-types' */
import { api, saveSession } from './api.js';
import { MAX_NAME_CHARS } from './account.js';
import { busy, errorBox, field, h, replace } from './dom.js';

/** The server's password rule (src/limits.ts; the browser tests check the form against it): code points, not only whitespace. */
const MIN_PASSWORD_CHARS = 10;
const MAX_PASSWORD_CHARS = 200;

/**
 * @typedef {object} SignInContext
 * @property {(path: string) => void} navigate
 * @property {() => void} signedIn
 * @property {string} [notice] why the user is here again
 */

/**
 * The session a sign-in answer makes: who signed in, their workspace and its time zone, read once here (time.js).
 * @param {{ token: string, user?: Api.GetWorkspace['user'], workspace?: { name?: string, time_zone?: string | null } | null }} answer a sign-in answer
 *   (POST /v1/auth/login, POST /v1/auth/password), or a token's with its GET /v1/workspace
 * @returns {import('./api.js').Session}
 */
function sessionOf(answer) {
  return {
    token: answer.token,
    role: answer.user?.role ?? 'agent',
    email: answer.user?.email,
    userId: answer.user?.id,
    name: typeof answer.user?.name === 'string' ? answer.user.name : null,
    workspace: answer.workspace?.name,
    timeZone: typeof answer.workspace?.time_zone === 'string' ? answer.workspace.time_zone : null,
  };
}

/** @param {Api.PostAuthLogin} answer the sign-in answer @param {SignInContext} ctx */
function accept(answer, ctx) {
  saveSession(sessionOf(answer));
  ctx.signedIn();
}

/** @param {HTMLElement} main @param {SignInContext} ctx */
export function renderSignIn(main, ctx) {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const loginError = errorBox();
  const loginButton = h('button', { type: 'submit' }, 'Sign in');
  const login = h('form', { class: 'card', 'aria-labelledby': 'signin-title' },
    h('h1', { id: 'signin-title' }, 'Sign in to Botlink'),
    ctx.notice ? h('p', { class: 'notice', role: 'status' }, ctx.notice) : null,
    field('Email', email),
    field('Password', password),
    loginError.el,
    loginButton);
  login.addEventListener('submit', (event) => {
    event.preventDefault();
    loginError.clear();
    void busy(loginButton, async () => {
      try {
        accept(await /** @type {Promise<Api.PostAuthLogin>} */ (api('POST', '/v1/auth/login', { body: { email: email.value.trim(), password: password.value }, signIn: true })), ctx);
      } catch (err) {
        loginError.show(err);
        password.focus();
      }
    });
  });

  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', spellcheck: 'false', required: true });
  const tokenError = errorBox();
  const tokenButton = h('button', { type: 'submit' }, 'Sign in with this token');
  const withToken = h('form', { 'aria-label': 'Sign in with a token' },
    field('Token', token, 'A user token (blt_…), as printed at the first start or given when the user was added.'),
    tokenError.el,
    tokenButton);
  withToken.addEventListener('submit', (event) => {
    event.preventDefault();
    tokenError.clear();
    void busy(tokenButton, async () => {
      try {
        await signInWithToken(token.value.trim());
        ctx.signedIn();
      } catch (err) {
        tokenError.show(err);
        token.focus();
      }
    });
  });

  replace(main, h('div', { class: 'signin' }, login, forgotPassword(email), h('details', { class: 'card' }, h('summary', {}, 'Sign in with a token'), withToken)));
}

/**
 * "Forgot your password?": POST /v1/auth/reset, which answers the same whether or not the email signs in anywhere,
 * so the page says the same too.
 * @param {HTMLInputElement} signInEmail the sign-in form's email, taken over when filled
 */
function forgotPassword(signInEmail) {
  const email = h('input', { type: 'email', name: 'reset-email', autocomplete: 'username', required: true });
  const error = errorBox();
  const done = h('p', { role: 'status' });
  const button = h('button', { type: 'submit' }, 'Email me a link');
  const form = h('form', { 'aria-label': 'Forgot your password' },
    h('p', {}, 'We email you a link to choose a new password. It works once, for 1 hour.'),
    field('Your email', email), error.el, button, done);
  // The form joins the page when opened: until then the sign-in form's Email is the page's only one.
  const details = h('details', { class: 'card' }, h('summary', {}, 'Forgot your password?'));
  details.addEventListener('toggle', () => {
    if (details.open && !form.isConnected) details.append(form);
    if (details.open && !email.value) email.value = signInEmail.value.trim();
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    done.textContent = '';
    void busy(button, async () => {
      try {
        await api('POST', '/v1/auth/reset', { body: { email: email.value.trim() }, signIn: true });
        done.textContent = `If ${email.value.trim()} signs in to Botlink, a link is on its way; look in its inbox (and its spam folder). No email within a few minutes? An owner or admin of your workspace can make you a new invite link on Users.`;
      } catch (err) {
        error.show(err);
      }
    });
  });
  return details;
}

/**
 * A token says nothing of its user, so who it is (role, email, id, name) is asked of the API: GET /v1/workspace answers
 * every role with its `user`, so no refused request is needed to tell an agent from an owner.
 * @param {string} token
 */
async function signInWithToken(token) {
  /** @type {Api.GetWorkspace | null} */
  const workspace = await api('GET', '/v1/workspace', { token });
  const user = workspace?.user;
  /** @type {import('./api.js').Role} */
  const role = user?.role === 'owner' || user?.role === 'admin' || user?.role === 'agent' ? user.role : 'manager';
  saveSession({ ...sessionOf({ token, user, workspace }), role });
}

/** @param {HTMLElement} main @param {SignInContext} ctx */
export function renderInvite(main, ctx, kind = /** @type {'invite' | 'reset'} */ ('invite')) {
  // The invite token is read once and taken out of the address, so it stays in no history or screenshot.
  const invite = decodeURIComponent(location.hash.slice(1));
  if (invite) history.replaceState(null, '', location.pathname);
  document.title = 'Set your password · Botlink';
  if (!invite) {
    replace(main, h('div', { class: 'card' }, h('h1', {}, 'This invite link is incomplete'),
      h('p', {}, 'Open the link from your invitation again, or ask whoever invited you for a new one. '),
      h('p', {}, h('a', { href: '/dashboard', 'data-link': true }, 'Go to sign-in'))));
    return;
  }
  // The server's rule (README: Sign in): 10 to 200 characters, not only whitespace; its answer names a broken rule.
  const password = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD_CHARS, maxlength: MAX_PASSWORD_CHARS });
  const again = h('input', { type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD_CHARS, maxlength: MAX_PASSWORD_CHARS });
  // Accepting an invite, the person may say how colleagues and customers call them (src/accounts/display-name.ts).
  const name = kind === 'invite' ? h('input', { type: 'text', autocomplete: 'name', maxlength: MAX_NAME_CHARS }) : null;
  const error = errorBox();
  const button = h('button', { type: 'submit' }, 'Set password and sign in');
  const form = h('form', { class: 'card', 'aria-labelledby': 'invite-title' },
    h('h1', { id: 'invite-title' }, kind === 'reset' ? 'Choose a new password' : 'Set your password'),
    h('p', {}, kind === 'reset' ? 'Choose a new password to sign in with from now on. Your old one stops working.' : 'You were invited to a Botlink workspace. Choose a password to sign in with from now on.'),
    name ? field('Your name (optional)', name, 'What colleagues and customers see, as in “Sam, from the team”. Empty keeps the name you were invited with, or the first word of your email.') : null,
    field('New password', password, `${MIN_PASSWORD_CHARS} to ${MAX_PASSWORD_CHARS} characters.`),
    field('The same password again', again),
    error.el,
    button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    if (password.value !== again.value) {
      error.show('The two passwords differ; type the same password twice.');
      again.focus();
      return;
    }
    void busy(button, async () => {
      try {
        // An empty name keeps the one given with the invite, when there was one.
        const named = name && name.value.trim() ? { name: name.value.trim() } : {};
        /** @type {Api.PostAuthPassword} */
        const answer = await api('POST', '/v1/auth/password', { body: kind === 'reset' ? { reset: invite, password: password.value } : { invite, password: password.value, ...named }, signIn: true });
        saveSession(sessionOf(answer));
        // The dashboard's start: the Overview (with the first-day list) for owners and admins, conversations for agents.
        ctx.navigate('/dashboard');
      } catch (err) {
        error.show(err);
      }
    });
  });
  replace(main, h('div', { class: 'signin' }, form));
}
