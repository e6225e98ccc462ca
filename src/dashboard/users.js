// @ts-check
/**
 * Users (owners and admins): the list (who has set a password), adding a user with a role and a name (their invite link
 * shown once; no token: nobody but the person holds one of theirs), changing a user's name, a new invite link for a
 * user who lost theirs or forgot their password, removing. Admins add agents only: an invite link sets a password, so
 * owners' and admins' links are made by owners (README: Sign in); admins name agents and themselves.
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetUsers['users']>[number]} User */
import { MAX_NAME_CHARS } from './account.js';
import { api, currentSession, saveSession } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, loading, replace, showFieldErrors, shownOnce, uid } from './dom.js';
import { localAddressNote } from './public-address.js';

/** @param {HTMLElement} main */
export function renderUsers(main) {
  const list = h('div', { 'aria-busy': 'true' }, loading('Loading users…'));
  const listError = errorBox();
  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off' });
  const name = h('input', { type: 'text', name: 'name', autocomplete: 'off', maxlength: MAX_NAME_CHARS });
  // An admin signed in with a password is known as one; signed in with a token ('manager') the server says no if need be.
  const admin = currentSession()?.role === 'admin';
  const role = h('select', { name: 'role' },
    h('option', { value: 'agent' }, 'Agent: conversations and team'),
    admin ? null : h('option', { value: 'admin' }, 'Admin: everything'),
    admin ? null : h('option', { value: 'owner' }, 'Owner: everything, and owners'));
  const addError = errorBox();
  const addButton = h('button', { type: 'submit' }, 'Add user');
  const created = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'card', 'aria-labelledby': 'add-user' }, h('h2', { id: 'add-user' }, 'Add a user'),
    field('Email', email),
    field('Name (optional)', name, 'What colleagues and customers see, as in “Sam, from the team”; they can change it. Empty: the first word of the email.'),
    field('Role', role), addError.el, addButton, created);
  replace(main, h('h1', {}, 'Users'), listError.el, list, form);

  let stopped = false;
  async function load() {
    try {
      /** @type {Api.GetUsers} */
      const answer = await api('GET', '/v1/users');
      if (stopped) return;
      list.setAttribute('aria-busy', 'false');
      replace(list, h('ul', { class: 'users' }, (answer.users ?? []).map((u) => {
        const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${String(u.email)}` }, 'Remove');
        remove.addEventListener('click', () => {
          listError.clear();
          if (!confirm(`Remove ${String(u.email)}? All their tokens stop working at once.`)) return;
          void busy(remove, async () => {
            try {
              await api('DELETE', `/v1/users/${encodeURIComponent(String(u.id))}`);
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
              /** @type {Api.PostUsersIdInvite} */
              const answer = await api('POST', `/v1/users/${encodeURIComponent(String(u.id))}/invite`);
              replace(link, shownOnce('Invite link', String(answer.invite_url), `Send this link to ${String(u.email)}: it sets a new password, works once, and their older links stop working.`),
                localAddressNote(String(answer.invite_url), 'this invite link'),
                answer.invite_emailed ? h('p', { class: 'ok-note' }, `Also emailed to ${String(u.email)}.`) : null);
            } catch (err) {
              listError.show(err);
            }
          });
        });
        const who = h('span', { class: 'who' }, whoIs(u));
        return h('li', {},
          who,
          h('span', { class: 'badge' }, String(u.role)),
          h('span', { class: 'meta' }, u.password_set ? 'password set' : 'invited, no password yet'),
          invite, remove, mayRename(u) ? renameForm(u, who) : null, link);
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
    clearFieldErrors([email, name]);
    void busy(addButton, async () => {
      try {
        /** @type {Api.PostUsers} */
        const answer = await api('POST', '/v1/users', { body: { email: email.value.trim(), role: role.value, ...(name.value.trim() ? { name: name.value } : {}) } });
        email.value = '';
        name.value = '';
        replace(created,
          h('p', {}, `${String(answer.user.email)} was added as ${String(answer.user.role)}.`),
          typeof answer.invite_url === 'string' ? shownOnce('Invite link', answer.invite_url, 'Send this link to the new user: they set their password with it and sign in. It works once.') : null,
          typeof answer.invite_url === 'string' ? localAddressNote(answer.invite_url, 'this invite link') : null,
          answer.invite_emailed ? h('p', { class: 'ok-note' }, `Also emailed to ${String(answer.user?.email ?? 'the new user')}.`) : null);
        await load();
      } catch (err) {
        showFieldErrors(err, [[(f) => f === 'email', email], [(f) => f === 'name', name]], addError);
      }
    });
  });
  void load();
  return () => {
    stopped = true;
  };
}

/**
 * Whether this screen offers to change a user's name: owners name anyone, admins agents and themselves (signed in with
 * a token the role is not known, and the service says no when it must).
 * @param {User} u a user of GET /v1/users
 */
function mayRename(u) {
  const me = currentSession();
  return me?.role !== 'admin' || u.role === 'agent' || u.id === me.userId;
}

/** How the list names a user: their name and email, or the email alone. @param {{ name?: string | null, email?: string }} u */
function whoIs(u) {
  return u.name ? `${String(u.name)} · ${String(u.email)}` : String(u.email);
}

/** A user's name, changed in place (PATCH /v1/users/{id}); `who` is the list's line that names them. @param {User} u @param {HTMLElement} who */
function renameForm(u, who) {
  const input = h('input', { type: 'text', value: u.name ?? '', maxlength: MAX_NAME_CHARS, autocomplete: 'off', id: uid('user-name') });
  const error = errorBox();
  const status = h('span', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'submit', class: 'quiet', 'aria-label': `Save name of ${String(u.email)}` }, 'Save name');
  // The label says whose name it is: every user of the list has one of these.
  const form = h('form', { class: 'row user-name' },
    h('div', { class: 'field' }, h('label', { for: input.id }, 'Name', h('span', { class: 'sr-only' }, ` of ${String(u.email)}`)), input),
    button, status, error.el);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldErrors([input]);
    status.textContent = '';
    void busy(button, async () => {
      try {
        /** @type {Api.PatchUsersId} */
        const answer = await api('PATCH', `/v1/users/${encodeURIComponent(String(u.id))}`, { body: { name: input.value } });
        input.value = answer.user.name ?? '';
        who.textContent = whoIs(answer.user);
        status.textContent = answer.user.name ? `Saved: ${String(answer.user.name)}.` : 'Saved: no name.';
        // Your own name: the session keeps it for the Your account screen.
        const me = currentSession();
        if (me && me.userId === u.id) saveSession({ ...me, name: answer.user.name ?? null });
      } catch (err) {
        showFieldErrors(err, [[(f) => f === 'name', input]], error);
      }
    });
  });
  return form;
}
