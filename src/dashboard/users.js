// @ts-check
/**
 * Users (owners and admins): the list (who has set a password), adding a user with a role (their invite link shown
 * once; no token: nobody but the person holds one of theirs), a new invite link for a user who lost theirs or forgot
 * their password, removing. Admins add agents only: an invite link sets a password, so owners' and admins' links are
 * made by owners (README: Sign in).
 */
import { api, currentSession } from './api.js';
import { busy, errorBox, field, h, loading, replace, shownOnce } from './dom.js';

/** @param {HTMLElement} main */
export function renderUsers(main) {
  const list = h('div', { 'aria-busy': 'true' }, loading('Loading users…'));
  const listError = errorBox();
  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' });
  // An admin signed in with a password is known as one; signed in with a token ('manager') the server says no if need be.
  const admin = currentSession()?.role === 'admin';
  const role = h('select', { name: 'role' },
    h('option', { value: 'agent' }, 'Agent: conversations and team'),
    admin ? null : h('option', { value: 'admin' }, 'Admin: everything'),
    admin ? null : h('option', { value: 'owner' }, 'Owner: everything, and owners'));
  const addError = errorBox();
  const addButton = h('button', { type: 'submit' }, 'Add user');
  const created = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'card', 'aria-labelledby': 'add-user' }, h('h2', { id: 'add-user' }, 'Add a user'), field('Email', email), field('Role', role), addError.el, addButton, created);
  replace(main, h('h1', {}, 'Users'), listError.el, list, form);

  let stopped = false;
  async function load() {
    try {
      const answer = await api('GET', '/v1/users');
      if (stopped) return;
      list.setAttribute('aria-busy', 'false');
      replace(list, h('ul', { class: 'users' }, answer.users.map((/** @type {any} */ u) => {
        const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${String(u.email)}` }, 'Remove');
        remove.addEventListener('click', () => {
          listError.clear();
          if (!confirm(`Remove ${String(u.email)}? All their tokens stop working at once.`)) return;
          void busy(remove, async () => {
            try {
              await api('DELETE', `/v1/users/${encodeURIComponent(u.id)}`);
              await load();
            } catch (err) {
              listError.show(err);
            }
          });
        });
        const link = h('div', { 'aria-live': 'polite' });
        const invite = h('button', { type: 'button', class: 'quiet', 'aria-label': `New invite link for ${String(u.email)}` }, 'New invite link');
        invite.addEventListener('click', () => {
          listError.clear();
          void busy(invite, async () => {
            try {
              const answer = await api('POST', `/v1/users/${encodeURIComponent(u.id)}/invite`);
              replace(link, shownOnce('Invite link', String(answer.invite_url), `Send this link to ${String(u.email)}: it sets a new password, works once, and their older links stop working.`));
            } catch (err) {
              listError.show(err);
            }
          });
        });
        return h('li', {},
          h('span', { class: 'who' }, String(u.email)),
          h('span', { class: 'badge' }, String(u.role)),
          h('span', { class: 'meta' }, u.password_set ? 'password set' : 'invited, no password yet'),
          invite, remove, link);
      })));
    } catch (err) {
      if (stopped) return;
      replace(list);
      listError.show(err);
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    addError.clear();
    void busy(addButton, async () => {
      try {
        const answer = await api('POST', '/v1/users', { body: { email: email.value.trim(), role: role.value } });
        email.value = '';
        replace(created,
          h('p', {}, `${String(answer.user.email)} was added as ${String(answer.user.role)}.`),
          typeof answer.invite_url === 'string' ? shownOnce('Invite link', answer.invite_url, 'Send this link to the new user: they set their password with it and sign in. It works once.') : null);
        await load();
      } catch (err) {
        addError.show(err);
      }
    });
  });
  void load();
  return () => {
    stopped = true;
  };
}
