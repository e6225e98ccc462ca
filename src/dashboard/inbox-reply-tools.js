// @ts-check
/**
 * The reply box's tools to answer fast (docs/interfaces.md, "The team's tools"): `/` at the start of the reply box
 * opens the team's saved replies, filtered as one types (arrows choose, Enter or Tab inserts, Escape closes), inserted
 * with their placeholders filled; "Insert from knowledge" searches the knowledge base and inserts a passage; "Note"
 * next to Send makes what is written a private note, which only the team sees. Also: a note in the transcript (its
 * author edits and deletes it there, an owner deletes anyone's), the note box of a colleague who does not hold the
 * conversation, and a colleague's @mention of you, shown wherever you are.
 */
import { api } from './api.js';
import { busy, errorBox, field, h, replace, uid } from './dom.js';
import { when } from './time.js';
import { onMention } from './inbox-live.js';

/** The passage text shown in a search result before Insert, in characters. */
const RESULT_PREVIEW_CHARS = 280;
/** Saved replies the list shows at once. */
const LIST_MAX = 8;
/** A typed `/shortcut`: the whole reply box so far. */
const TYPED_SHORTCUT = /^\/([\p{L}\p{N}_-]*)$/u;
/** `{{ name }}`, as the service reads it (src/inbox/saved-replies.ts). */
const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
export const NOTE_LABEL = 'Note (only the team sees this)';
/** The placeholders a saved reply may hold (PLACEHOLDERS in src/inbox/saved-replies.ts). */
export const PLACEHOLDERS = ['customer.name', 'customer.email', 'agent.name'];

/** @import * as Api from './api-types' */
/** @typedef {Api.GetSavedReplies['saved_replies'][number]} SavedReply */
/** A message of a conversation, or a note among them (GET /v1/sessions/{id} `messages`). @typedef {NonNullable<Api.GetSessionsId['messages']>[number]} Message */
/** What the inbox stream's `mention` event says (src/inbox/notes.ts, MentionEvent). @typedef {import('./inbox-live.js').Mention} Mention */
/** @typedef {Partial<Record<'customer.name' | 'customer.email' | 'agent.name', string | null | undefined>>} PlaceholderValues */

/**
 * What the placeholders of a saved reply are filled with in a conversation. The reply box is the holder's, so the
 * session's `agent` is the one writing, named as customers see them (the service's rule, src/accounts/display-name.ts).
 * @param {Api.GetSessionsId | null} session @param {import('./api.js').Session} me
 */
export function placeholderValues(session, me) {
  const agent = session?.agent && (!me.userId || session.agent.user_id === me.userId) ? session.agent.name : null;
  const { name, email } = session?.customer ?? {};
  return { 'customer.name': typeof name === 'string' ? name : null, 'customer.email': typeof email === 'string' ? email : null, 'agent.name': agent ?? null };
}

/**
 * A saved reply's text with its placeholders filled, by the service's rules (fillPlaceholders in
 * src/inbox/saved-replies.ts): a value nobody knows leaves nothing, and the space before the comma it leaves goes.
 * @param {string} text @param {PlaceholderValues} values
 */
export function fillPlaceholders(text, values) {
  const known = /** @type {Record<string, string | null | undefined>} */ (values);
  const filled = text.replace(PLACEHOLDER, (whole, name) => (PLACEHOLDERS.includes(name) ? (known[name] ?? '').trim() : whole));
  return filled.replace(/[ \t]+([,.!?;:])/g, '$1').replace(/[ \t]{2,}/g, ' ').trim();
}

/**
 * The tools of the holder's reply box, around its textarea and Send button. `el` goes into the form (the Note switch
 * and Insert from knowledge, next to Send); `panel` after it (the knowledge search, a form of its own would nest).
 * Call before the reply box adds its own keydown: while the list is open Enter picks a saved reply and does not send.
 * @param {{ text: HTMLTextAreaElement, send: HTMLButtonElement, form: HTMLFormElement, values: () => PlaceholderValues, language?: () => string | null | undefined }} box
 */
export function replyTools(box) {
  const { text, send, form } = box;
  const label = /** @type {HTMLLabelElement | null} */ (form.querySelector(`label[for="${text.id}"]`));
  const replyLabel = label?.textContent ?? 'Your reply';

  // The saved replies' list: the textarea keeps the focus and points at the chosen option (aria-activedescendant).
  const listId = uid('saved');
  const list = h('ul', { class: 'saved-list', role: 'listbox', id: listId, 'aria-label': 'Saved replies', hidden: true });
  const listStatus = h('p', { class: 'sr-only', role: 'status' });
  text.setAttribute('aria-autocomplete', 'list');
  text.setAttribute('aria-controls', listId);
  /** @type {SavedReply[] | null} */
  let replies = null;
  /** @type {Promise<void> | null} */
  let loadingReplies = null;
  /** @type {SavedReply[]} */
  let shown = [];
  let active = -1;

  function load() {
    loadingReplies ??= /** @type {Promise<Api.GetSavedReplies>} */ (api('GET', '/v1/saved-replies')).then(
      (answer) => {
        replies = answer.saved_replies;
      },
      () => {
        replies = [];
        loadingReplies = null;
      },
    );
    return loadingReplies;
  }

  function close() {
    list.hidden = true;
    shown = [];
    active = -1;
    text.removeAttribute('aria-activedescendant');
  }

  async function update() {
    const typed = TYPED_SHORTCUT.exec(text.value);
    if (!typed) {
      if (!list.hidden) listStatus.textContent = '';
      close();
      return;
    }
    if (!replies) await load();
    const wanted = (typed[1] ?? '').toLowerCase();
    const all = replies ?? [];
    const starts = all.filter((r) => r.shortcut.toLowerCase().startsWith(wanted));
    const within = all.filter((r) => !starts.includes(r) && (r.shortcut.toLowerCase().includes(wanted) || r.text.toLowerCase().includes(wanted)));
    shown = [...starts, ...within].slice(0, LIST_MAX);
    // The text may have changed while the list loaded.
    if (!TYPED_SHORTCUT.test(text.value)) return close();
    if (shown.length === 0) {
      close();
      listStatus.textContent = all.length === 0 ? 'Your team has no saved replies yet: add them on the Saved replies page.' : `No saved reply matches /${wanted}.`;
      return;
    }
    active = 0;
    replace(list, shown.map((r, i) => {
      const option = h('li', { role: 'option', id: `${listId}-${i}`, 'aria-selected': 'false', class: 'saved-option' },
        h('strong', {}, `/${r.shortcut}`), ' ', h('span', { class: 'meta' }, clip(r.text, 90)));
      // mousedown, not click: the textarea keeps the focus.
      option.addEventListener('mousedown', (event) => {
        event.preventDefault();
        pick(i);
      });
      return option;
    }));
    list.hidden = false;
    mark();
    listStatus.textContent = `${shown.length} saved ${shown.length === 1 ? 'reply' : 'replies'}: up and down arrows to choose, Enter to insert, Escape to close.`;
  }

  function mark() {
    list.querySelectorAll('[role="option"]').forEach((option, i) => option.setAttribute('aria-selected', String(i === active)));
    if (active >= 0) {
      text.setAttribute('aria-activedescendant', `${listId}-${active}`);
      list.querySelector(`#${CSS.escape(`${listId}-${active}`)}`)?.scrollIntoView({ block: 'nearest' });
    }
  }

  /** @param {number} i */
  function pick(i) {
    const reply = shown[i];
    if (!reply) return;
    text.value = fillPlaceholders(reply.text, box.values());
    close();
    listStatus.textContent = `Inserted /${reply.shortcut}. Check it, then send.`;
    text.focus();
    text.setSelectionRange(text.value.length, text.value.length);
  }

  text.addEventListener('input', () => void update());
  text.addEventListener('keydown', (event) => {
    if (list.hidden) return;
    const stop = () => {
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    if (event.key === 'ArrowDown') {
      stop();
      active = (active + 1) % shown.length;
      mark();
    } else if (event.key === 'ArrowUp') {
      stop();
      active = (active - 1 + shown.length) % shown.length;
      mark();
    } else if ((event.key === 'Enter' && !event.shiftKey && !event.isComposing) || event.key === 'Tab') {
      stop();
      pick(active);
    } else if (event.key === 'Escape') {
      stop();
      close();
      listStatus.textContent = 'Saved replies closed.';
    }
  });
  text.addEventListener('blur', () => setTimeout(() => document.activeElement !== text && close(), 0));

  // Note: what is written goes to the team only.
  const note = h('button', { type: 'button', class: 'quiet note-switch', 'aria-pressed': 'false' }, 'Note');
  const modeStatus = h('p', { class: 'sr-only', role: 'status' });
  const sendWords = send.textContent ?? 'Send';
  /** @param {boolean} on */
  function noteMode(on) {
    note.setAttribute('aria-pressed', String(on));
    form.classList.toggle('note-mode', on);
    send.textContent = on ? 'Add note' : sendWords;
    if (label) label.textContent = on ? 'Your note (only the team sees this)' : replyLabel;
    modeStatus.textContent = on ? 'Note: only the team sees what you write. @name tells a colleague.' : 'Reply: the customer sees what you write.';
  }
  note.addEventListener('click', () => {
    noteMode(note.getAttribute('aria-pressed') !== 'true');
    text.focus();
  });

  // Insert from knowledge.
  const searchOpen = h('button', { type: 'button', class: 'quiet', 'aria-expanded': 'false' }, 'Insert from knowledge');
  const words = h('input', { type: 'search', name: 'knowledge-search', autocomplete: 'off' });
  const go = h('button', { type: 'button' }, 'Search');
  const results = h('div', { 'aria-live': 'polite' });
  const searchError = errorBox();
  const panelId = uid('knowledge');
  const panel = h('section', { class: 'card knowledge-insert', id: panelId, 'aria-label': 'Insert from knowledge', hidden: true },
    h('div', { class: 'row search-row' }, field('Search the knowledge base', words, 'Words the answer holds, such as warranty or opening hours.'), go), searchError.el, results);
  searchOpen.setAttribute('aria-controls', panelId);
  /** @param {boolean} open */
  function showPanel(open) {
    panel.hidden = !open;
    searchOpen.setAttribute('aria-expanded', String(open));
    if (open) words.focus();
  }
  searchOpen.addEventListener('click', () => showPanel(searchOpen.getAttribute('aria-expanded') !== 'true'));
  async function search() {
    searchError.clear();
    const q = words.value.trim();
    if (!q) {
      words.focus();
      return;
    }
    try {
      const language = box.language?.();
      /** @type {Api.GetKnowledgeSearch} */
      const answer = await api('GET', `/v1/knowledge/search?q=${encodeURIComponent(q)}${language ? `&language=${encodeURIComponent(language)}` : ''}`);
      const passages = answer.passages ?? [];
      replace(results, passages.length === 0
        ? h('p', { class: 'empty' }, `Nothing in the knowledge base matches “${q}”.`)
        : h('ul', { class: 'plain passages' }, passages.map(({ title, text: passage = '' }) => h('li', {},
          h('p', {}, h('strong', {}, title)),
          h('p', { class: 'meta' }, clip(passage, RESULT_PREVIEW_CHARS)),
          h('button', { type: 'button', class: 'secondary', 'aria-label': `Insert: ${title}`, onclick: () => insert(passage) }, 'Insert')))));
    } catch (err) {
      searchError.show(err);
    }
  }
  go.addEventListener('click', () => void busy(go, search));
  words.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void busy(go, search);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      showPanel(false);
      searchOpen.focus();
    }
  });
  /** The passage where the cursor is, on a line of its own. @param {string} passage */
  function insert(passage) {
    const at = text.selectionStart ?? text.value.length;
    const before = text.value.slice(0, at).replace(/\s+$/, '');
    const after = text.value.slice(text.selectionEnd ?? at).replace(/^\s+/, '');
    text.value = [before, passage.trim(), after].filter(Boolean).join('\n');
    showPanel(false);
    listStatus.textContent = 'Passage inserted. Check it, then send.';
    text.focus();
    const end = (before ? before.length + 1 : 0) + passage.trim().length;
    text.setSelectionRange(end, end);
  }

  return {
    el: h('div', { class: 'row reply-tools' }, note, searchOpen, list, listStatus, modeStatus),
    panel,
    /** Whether Send makes a note. */
    isNote: () => note.getAttribute('aria-pressed') === 'true',
    /** After a note went: back to replying to the customer. */
    sent() {
      if (note.getAttribute('aria-pressed') === 'true') noteMode(false);
    },
  };
}

/**
 * A note box for whoever does not hold the conversation (every role writes notes, on every channel). Kept across
 * redraws, so what is typed stays.
 * @param {string} sessionId @param {() => void} added
 */
export function noteBox(sessionId, added) {
  const text = h('textarea', { rows: 2, name: 'note', autocomplete: 'off' });
  const error = errorBox();
  const add = h('button', { type: 'submit', class: 'secondary' }, 'Add note');
  const done = h('p', { class: 'sr-only', role: 'status' });
  const form = h('form', { class: 'note-box note-mode', 'aria-label': 'Note for the team' },
    field('Note for the team', text, 'Only the team sees a note; the customer never does. @name tells a colleague.'), error.el, h('div', { class: 'row' }, add), done);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const words = text.value.trim();
    if (!words) {
      error.show(new Error('Write the note first.'));
      text.focus();
      return;
    }
    error.clear();
    void busy(add, async () => {
      try {
        /** @type {Api.PostSessionsIdNotes} */
        const answer = await api('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/notes`, { body: { text: words } });
        text.value = '';
        done.textContent = mentionWords(answer?.note?.mentions);
        added();
      } catch (err) {
        error.show(err);
      }
    });
  });
  return { el: form };
}

/** What the author is told once a note is added. @param {unknown} mentions */
export function mentionWords(mentions) {
  const names = Array.isArray(mentions) ? mentions.map((m) => String(m?.name ?? '')).filter(Boolean) : [];
  return names.length ? `Note added; ${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} notified.` : 'Note added.';
}

/**
 * A note in the transcript: styled apart and labelled, so nobody takes it for a message the customer saw; "edited" once
 * its author changed it.
 * @param {Message} m @param {import('./dom.js').Child} [body] what shows instead of its text (its editor) @param {import('./dom.js').Child} [tools]
 */
export function noteItem(m, body, tools) {
  return h('li', { class: 'msg from-note', 'data-message': m.id },
    h('p', { class: 'msg-head' }, h('strong', {}, NOTE_LABEL), ' ', h('span', { class: 'meta' }, `${m.author?.name ?? 'A colleague'} · ${when(m.at)}`),
      m.edited_at ? h('span', { class: 'meta', 'data-testid': 'note-edited', title: `Edited ${when(m.edited_at)}` }, ' · edited') : null),
    body ?? h('p', { class: 'msg-text' }, String(m.text ?? '')),
    tools ?? null);
}

/**
 * The notes of one conversation's transcript with what their reader may do: the author edits the text (in place; Save
 * or Escape) and deletes it, an owner deletes anyone's, after a question. An editor being written in is kept across the
 * transcript's redraws, so what is typed stays.
 * @param {{ sessionId: string, me: () => string | null, owner: boolean, changed: () => Promise<void> | void, announce: (words: string) => void, afterDelete: () => void }} deps
 */
export function noteTools(deps) {
  const path = (/** @type {string} */ noteId) => `/v1/sessions/${encodeURIComponent(deps.sessionId)}/notes/${encodeURIComponent(noteId)}`;
  /** The open editors, by note id. @type {Map<string, HTMLFormElement>} */
  const editors = new Map();

  /** @param {Message} m */
  function editor(m) {
    const text = /** @type {HTMLTextAreaElement} */ (h('textarea', { rows: 3, name: 'note-edit', autocomplete: 'off' }));
    text.value = String(m.text ?? '');
    const error = errorBox();
    const save = h('button', { type: 'submit' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'quiet' }, 'Cancel');
    const form = /** @type {HTMLFormElement} */ (h('form', { class: 'note-edit', 'aria-label': 'Edit your note' },
      field('Note text', text, '@name tells a colleague not told of this note yet.'), error.el, h('div', { class: 'row' }, save, cancel)));
    const close = () => {
      editors.delete(m.id);
      const item = form.closest('li');
      const again = item ? noteView(m) : null;
      if (item && again) item.replaceWith(again);
      /** @type {HTMLElement | null | undefined} */ (again?.querySelector('[data-note-edit]'))?.focus();
    };
    cancel.addEventListener('click', close);
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        close();
      }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const words = text.value.trim();
      if (!words) {
        error.show(new Error('Write the note first, or delete it.'));
        text.focus();
        return;
      }
      error.clear();
      void busy(save, async () => {
        try {
          await api('PATCH', path(m.id), { body: { text: words } });
          editors.delete(m.id);
          deps.announce('Note changed.');
          await deps.changed();
          // Back on the changed note's Edit, where the keyboard was.
          /** @type {HTMLElement | null} */ (document.querySelector(`[data-message="${CSS.escape(m.id)}"] [data-note-edit]`))?.focus();
        } catch (err) {
          error.show(err);
        }
      });
    });
    editors.set(m.id, form);
    return { form, focus: () => text.focus() };
  }

  /** @param {Message} m */
  async function remove(m) {
    if (!confirm('Delete this note? Nobody of the team will see it any more.')) return;
    try {
      await api('DELETE', path(m.id));
      editors.delete(m.id);
      deps.announce('Note deleted.');
      await deps.changed();
      deps.afterDelete();
    } catch (err) {
      deps.announce(err instanceof Error ? `The note was not deleted: ${err.message}` : 'The note was not deleted.');
    }
  }

  /** @param {Message} m */
  function noteView(m) {
    const mine = m.author?.user_id != null && m.author.user_id === deps.me();
    const mayDelete = mine || deps.owner;
    const open = editors.get(m.id);
    if (open) return noteItem(m, open);
    if (!mayDelete) return noteItem(m);
    const at = when(m.at);
    const edit = mine ? h('button', { type: 'button', class: 'quiet', 'data-note-edit': true, 'aria-label': `Edit your note of ${at}` }, 'Edit') : null;
    const del = h('button', { type: 'button', class: 'quiet', 'aria-label': `Delete the note of ${at}` }, 'Delete');
    const item = noteItem(m, undefined, h('div', { class: 'row note-actions' }, edit, del));
    edit?.addEventListener('click', () => {
      const { form, focus } = editor(m);
      item.replaceWith(noteItem(m, form));
      focus();
    });
    del.addEventListener('click', () => void busy(/** @type {HTMLButtonElement} */ (del), () => remove(m)));
    return item;
  }

  return { item: noteView };
}

/** @param {string} text @param {number} max */
function clip(text, max) {
  const chars = Array.from(text.replace(/\s+/g, ' '));
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
}

let mentionsShown = false;

/**
 * A colleague's @mention of you, wherever you are in the dashboard (the inbox stream's `mention` event): a notice that
 * stays until dismissed, with the way to the conversation; and the browser's notification once allowed.
 */
export function showMentions() {
  if (mentionsShown) return;
  mentionsShown = true;
  const region = h('div', { class: 'mentions', role: 'region', 'aria-label': 'Mentions', 'aria-live': 'polite' });
  document.body.append(region);
  onMention((m) => {
    const by = String(m?.by?.name ?? 'A colleague');
    const sessionId = String(m?.session_id ?? '');
    const dismiss = h('button', { type: 'button', class: 'quiet' }, 'Dismiss');
    const item = h('div', { class: 'mention card', 'data-testid': 'mention' },
      h('p', {}, h('strong', {}, `${by} mentioned you in a note`), ': ', clip(String(m?.text ?? ''), 140)),
      h('div', { class: 'row' }, h('a', { href: `/dashboard/inbox/${encodeURIComponent(sessionId)}`, 'data-link': true }, 'Open the conversation'), dismiss));
    dismiss.addEventListener('click', () => item.remove());
    item.querySelector('a')?.addEventListener('click', () => item.remove());
    region.append(item);
    if (typeof Notification === 'function' && Notification.permission === 'granted') {
      try {
        new Notification(`${by} mentioned you in a note`, { body: clip(String(m?.text ?? ''), 140), tag: `botlink-mention-${String(m?.note_id ?? '')}` });
      } catch {
        // Some browsers notify from a service worker only: the notice on the page still says it.
      }
    }
  });
}
