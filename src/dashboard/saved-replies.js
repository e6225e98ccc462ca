// @ts-check
/**
 * Saved replies: the team's answers to what customers often ask, typed as /shortcut in the Inbox's reply box
 * (docs/interfaces.md, "The team's tools"). Everyone adds them; an agent changes and deletes the ones they wrote,
 * owners and admins every one (the API says so too).
 */
import { api, isManager } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, loading, replace, showFieldErrors } from './dom.js';
import { PLACEHOLDERS } from './inbox-reply-tools.js';

/** @import * as Api from './api-types' */
/** @typedef {Api.GetSavedReplies['saved_replies'][number]} SavedReply */

const PLACEHOLDER_HINT = `Placeholders filled when the reply is inserted: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(', ')}.`;

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderSavedReplies(main, ctx) {
  const list = h('div', { 'aria-busy': 'true' }, loading('Loading saved replies…'));
  const listError = errorBox();
  const status = h('p', { class: 'sr-only', role: 'status' });
  const adding = replyForm(null, async () => {
    status.textContent = 'Saved reply added.';
    await reload();
  });
  replace(main,
    h('h1', {}, 'Saved replies'),
    h('p', {}, 'Answers your team gives often. In a conversation, type / at the start of the reply box and choose one: it is inserted for you to check and send.'),
    h('section', { class: 'card', 'aria-labelledby': 'add-saved' }, h('h2', { id: 'add-saved' }, 'Add a saved reply'), adding.el),
    h('section', { 'aria-labelledby': 'saved-list' }, h('h2', { id: 'saved-list' }, 'Your team’s saved replies'), listError.el, list),
    status);

  let stopped = false;
  async function reload() {
    try {
      /** @type {Api.GetSavedReplies} */
      const answer = await api('GET', '/v1/saved-replies');
      if (stopped) return;
      list.setAttribute('aria-busy', 'false');
      const replies = answer.saved_replies;
      replace(list, replies.length === 0
        ? h('p', { class: 'empty' }, 'No saved replies yet. Add the answers you type most, such as your opening hours or how returns work.')
        : h('ul', { class: 'saved-replies' }, replies.map((r) => item(r))));
    } catch (err) {
      if (stopped) return;
      replace(list);
      listError.show(err);
    }
  }

  /** An agent changes only what they wrote (when the dashboard knows who they are; else the API answers). @param {SavedReply} r */
  function mayChange(r) {
    return isManager(ctx.session) || !ctx.session.userId || r.created_by === ctx.session.userId;
  }

  /** @param {SavedReply} r */
  function item(r) {
    const li = h('li', { class: 'card saved-reply' });
    const show = () => {
      const edit = h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit /${r.shortcut}` }, 'Edit');
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete /${r.shortcut}` }, 'Delete');
      const failed = errorBox();
      edit.addEventListener('click', () => {
        const form = replyForm(r, async () => {
          status.textContent = `/${r.shortcut} saved.`;
          await reload();
        }, () => {
          show();
          edit.focus();
        });
        replace(li, form.el);
        form.focus();
      });
      remove.addEventListener('click', () => {
        // Asked once more, in place: a deleted reply is gone for the whole team.
        const sure = h('button', { type: 'button', class: 'danger' }, `Delete /${r.shortcut} for everyone`);
        const keep = h('button', { type: 'button', class: 'quiet' }, 'Keep it');
        keep.addEventListener('click', () => {
          show();
        });
        sure.addEventListener('click', () => void busy(sure, async () => {
          try {
            await api('DELETE', `/v1/saved-replies/${encodeURIComponent(r.id)}`);
            status.textContent = `/${r.shortcut} deleted.`;
            await reload();
          } catch (err) {
            failed.show(err);
          }
        }));
        replace(actions, sure, keep);
        keep.focus();
      });
      const actions = h('div', { class: 'row' }, mayChange(r) ? [edit, remove] : h('p', { class: 'hint' }, 'Written by a colleague: an owner or admin can change it.'));
      replace(li, h('p', {}, h('strong', {}, `/${r.shortcut}`)), h('p', { class: 'msg-text' }, r.text), actions, failed.el);
    };
    show();
    return li;
  }

  void reload();
  return () => {
    stopped = true;
  };
}

/**
 * The form that adds a saved reply (reply null) or changes one. @param {SavedReply | null} reply
 * @param {() => Promise<void>} saved @param {() => void} [cancel]
 */
function replyForm(reply, saved, cancel) {
  const shortcut = h('input', { name: 'shortcut', autocomplete: 'off', spellcheck: 'false', value: reply?.shortcut ?? '' });
  const text = h('textarea', { name: 'text', rows: 4 });
  text.value = reply?.text ?? '';
  const error = errorBox();
  const save = h('button', { type: 'submit' }, reply ? 'Save' : 'Add');
  const form = h('form', { class: 'saved-reply-form', 'aria-label': reply ? `Edit /${reply.shortcut}` : 'Add a saved reply' },
    field('Shortcut', shortcut, 'Typed after / in the reply box: letters, digits, - and _, such as warranty or opening-hours.'),
    field('Reply', text, PLACEHOLDER_HINT),
    error.el,
    h('div', { class: 'row' }, save, cancel ? h('button', { type: 'button', class: 'quiet', onclick: cancel }, 'Cancel') : null));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldErrors([shortcut, text]);
    void busy(save, async () => {
      const body = { shortcut: shortcut.value.trim().replace(/^\//, ''), text: text.value };
      try {
        if (reply) await api('PUT', `/v1/saved-replies/${encodeURIComponent(reply.id)}`, { body });
        else await api('POST', '/v1/saved-replies', { body });
        if (!reply) {
          shortcut.value = '';
          text.value = '';
        }
        await saved();
      } catch (err) {
        // A taken shortcut (409) and a wrong field (422) are said under the field.
        showFieldErrors(err, [[(f) => f === 'shortcut', shortcut], [(f) => f === 'text', text]], error);
      }
    });
  });
  return { el: form, focus: () => shortcut.focus() };
}
