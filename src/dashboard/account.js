// @ts-check
/**
 * Your account (every role; the header's email opens it): your name, which colleagues and customers see ("Sam, from the
 * team", the line that you joined a chat, mentions), and the email you sign in with (PATCH /v1/account). The
 * Workspace screen shows the same two forms to owners and admins.
 */
/** @import * as Api from './api-types' */
import { api, currentSession, saveSession } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, replace, showFieldErrors } from './dom.js';

/** A user's name has at most this many characters (src/limits.ts, MAX_USER_NAME_CHARS). */
export const MAX_NAME_CHARS = 120;

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderAccount(main, ctx) {
  replace(main, h('h1', {}, 'Your account'), yourselfSection(ctx.session));
}

/** Your name and your sign-in email, each a form of its own. @param {import('./api.js').Session} session */
export function yourselfSection(session) {
  return h('section', { class: 'card', 'aria-labelledby': 'me' }, h('h2', { id: 'me' }, 'Your name and sign-in email'), nameForm(session.name ?? ''), emailForm(session.email ?? ''));
}

/** @param {string} current */
function nameForm(current) {
  const name = h('input', { type: 'text', value: current, autocomplete: 'name', maxlength: MAX_NAME_CHARS });
  const error = errorBox();
  const saved = h('p', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'submit' }, 'Save name');
  const form = h('form', { 'aria-label': 'Your name as others see it' },
    field('Your name', name, 'What colleagues and customers see, as in “Sam, from the team”. Empty: the first word of your email.'),
    error.el, button, saved);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldErrors([name]);
    saved.textContent = '';
    void busy(button, async () => {
      try {
        /** @type {Api.PatchAccount} */
        const answer = await api('PATCH', '/v1/account', { body: { name: name.value } });
        name.value = answer.name ?? '';
        const session = currentSession();
        if (session) saveSession({ ...session, name: answer.name ?? null });
        saved.textContent = answer.name ? `Saved: colleagues and customers see you as ${answer.name}.` : 'Saved: no name; the first word of your email is shown.';
      } catch (err) {
        showFieldErrors(err, [[(f) => f === 'name', name]], error);
      }
    });
  });
  return form;
}

/** @param {string} current */
function emailForm(current) {
  const email = h('input', { type: 'email', value: current, autocomplete: 'email', required: true, maxlength: 254 });
  const error = errorBox();
  const saved = h('p', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'submit' }, 'Change email');
  const form = h('form', { 'aria-label': 'Your sign-in email' },
    field('Email', email, 'You sign in with this address from now on; your password stays the same.'),
    error.el, button, saved);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldErrors([email]);
    saved.textContent = '';
    void busy(button, async () => {
      try {
        /** @type {Api.PatchAccount} */
        const answer = await api('PATCH', '/v1/account', { body: { email: email.value } });
        const stored = answer.email ?? email.value;
        email.value = stored;
        const session = currentSession();
        if (session) saveSession({ ...session, email: stored });
        const shown = document.querySelector('header [data-account]');
        if (shown) shown.textContent = stored;
        saved.textContent = `Saved: you sign in as ${stored}.`;
      } catch (err) {
        showFieldErrors(err, [[(f) => f === 'email', email]], error);
      }
    });
  });
  return form;
}
