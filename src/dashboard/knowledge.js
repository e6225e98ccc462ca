// @ts-check
/**
 * Knowledge: what the built-in AI answers from (docs/knowledge.md). Owners and admins try a question (the passages it
 * finds and what the customer would get, with and without their own system), write pages and question-and-answer pairs
 * by hand, and manage the sync key and the widget snippet; everyone sees the hand-made entries and what the shop's or
 * CMS's plugin synced (read-only here: the plugin changes it).
 */
import { ApiError, api, configured, isManager } from './api.js';
import { busy, copyText, errorBox, field, h, loading, replace, shownOnce, uid, when } from './dom.js';

/** The languages the form offers; the search stems English and Dutch, the others are matched word for word. */
const LANGUAGES = [['en', 'English'], ['nl', 'Dutch (Nederlands)'], ['de', 'German (Deutsch)'], ['fr', 'French (Français)']];
/** @param {string | null | undefined} code */
const languageName = (code) => LANGUAGES.find(([c]) => c === code)?.[1] ?? (code ? code : 'no language set');

/** @param {any} e */
function typeName(e) {
  if (e.type === 'qa') return 'Question and answer';
  if (e.type === 'product') return 'Product';
  return 'Page';
}

/** What a reply's source means to an owner. @param {string} source */
function sourceWords(source) {
  return ({
    integrator: 'Answered by your own system',
    knowledge_base: 'Answered from the knowledge base',
    ai: 'Written by the AI from the knowledge base',
    fallback: 'No fitting answer: the customer is told so and offered the team',
  })[source] ?? source;
}

/** A passage's score in words, the number beside it. @param {any} p */
function matchWords(p) {
  const words = { strong: 'Strong match', fair: 'Fair match', weak: 'Weak match: too weak to answer from' }[String(p.match)] ?? 'Match';
  return `${words} (score ${Number(p.score).toFixed(2)})`;
}

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderKnowledge(main, ctx) {
  const manager = isManager(ctx.session);
  let stopped = false;
  const mine = h('div', { 'aria-busy': 'true' }, loading('Loading your pages and questions…'));
  const synced = h('div', { 'aria-busy': 'true' }, loading('Loading what your plugin synced…'));
  const listError = errorBox();

  const editor = manager ? entryEditor() : null;
  const tryBox = manager ? tryPanel() : null;
  replace(main, h('h1', {}, 'Knowledge'),
    h('p', {}, 'The built-in AI answers customers from these pages and questions.'),
    tryBox?.el,
    h('section', { 'aria-labelledby': 'mine' }, h('h2', { id: 'mine', tabindex: -1 }, 'Your pages and questions'),
      h('p', { class: 'hint' }, manager ? 'Written here by your team. Customers get answers from them as soon as they are saved.' : 'Written by the owners and admins of this workspace.'),
      editor?.el, listError.el, mine),
    h('section', { 'aria-labelledby': 'synced' }, h('h2', { id: 'synced' }, 'From your shop or CMS plugin'),
      h('p', { class: 'hint' }, 'Sent by your plugin with the sync key. Change them in your shop or CMS: they are read-only here.'),
      synced),
    manager ? keySections() : null);

  async function loadMine() {
    try {
      const answer = await api('GET', '/v1/knowledge/entries?origin=dashboard&limit=200');
      if (stopped) return;
      mine.setAttribute('aria-busy', 'false');
      const entries = /** @type {any[]} */ (answer.entries);
      if (entries.length === 0) {
        replace(mine, h('p', { class: 'empty' }, manager ? 'Nothing written here yet. Add a question and its answer above.' : 'Nothing written here yet.'));
        return;
      }
      replace(mine, h('ul', { class: 'entries' }, entries.map((e) => entryItem(e, true))));
    } catch (err) {
      if (!stopped) replace(mine, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
    }
  }

  async function loadSynced() {
    try {
      const answer = await api('GET', '/v1/knowledge/entries?origin=sync&limit=200');
      if (stopped) return;
      synced.setAttribute('aria-busy', 'false');
      const items = /** @type {any[]} */ (answer.entries);
      if (items.length === 0) {
        replace(synced, h('p', { class: 'empty' }, 'Nothing synced yet. Install the shop or CMS plugin with the sync key, or send pages with PUT /v1/sync/pages/{external_id}.'));
        return;
      }
      const last = items.map((e) => String(e.updated_at)).sort().at(-1);
      const rows = items.map((e) => ({ text: `${String(e.title)} ${String(e.external_id ?? '')}`.toLowerCase(), el: entryItem(e, false) }));
      const search = /** @type {HTMLInputElement} */ (h('input', { type: 'search', autocomplete: 'off' }));
      const shown = h('p', { class: 'meta', role: 'status' });
      const listEl = h('ul', { class: 'entries' });
      const filter = () => {
        const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
        const matching = rows.filter((r) => words.every((w) => r.text.includes(w)));
        replace(listEl, matching.map((r) => r.el));
        shown.textContent = `${answer.next_cursor ? `The latest ${items.length}` : `${items.length}`} synced; last synced ${when(last)}${words.length ? `; ${matching.length} match` : ''}.`;
      };
      search.addEventListener('input', filter);
      replace(synced, field('Search the synced pages and products', search), shown, listEl);
      filter();
    } catch (err) {
      if (!stopped) replace(synced, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
    }
  }

  /** One entry of a list: its title, what it is, an excerpt and, for hand-made ones, Edit and Delete. @param {any} e @param {boolean} own */
  function entryItem(e, own) {
    const title = String(e.title);
    const facts = [typeName(e), languageName(e.language), `${own ? 'changed' : 'synced'} ${when(e.updated_at)}`];
    if (!own && e.external_id) facts.push(`id ${String(e.external_id)}`);
    const actions = own && manager && editor ? h('div', { class: 'row' },
      h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit ${title}`, onclick: (/** @type {Event} */ ev) => void editor.edit(e.id, /** @type {HTMLButtonElement} */ (ev.currentTarget)) }, 'Edit'),
      deleteButton(e.id, title)) : null;
    return h('li', { class: 'entry' },
      h('p', { class: 'entry-title' }, h('strong', {}, title)),
      h('p', { class: 'meta' }, facts.join(' · ')),
      e.type === 'qa' ? h('p', { class: 'excerpt' }, h('span', { class: 'sr-only' }, 'Answer: '), String(e.text)) : h('p', { class: 'excerpt' }, String(e.text)),
      actions);
  }

  /** @param {string} id @param {string} title */
  function deleteButton(id, title) {
    const button = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete ${title}` }, 'Delete');
    button.addEventListener('click', () => {
      listError.clear();
      if (!confirm(`Delete "${title}"? Customers no longer get answers from it.`)) return;
      void busy(button, async () => {
        try {
          await api('DELETE', `/v1/knowledge/entries/${encodeURIComponent(id)}`);
          editor?.forget(id);
          await loadMine();
          /** @type {HTMLElement | null} */ (main.querySelector('#mine'))?.focus();
        } catch (err) {
          listError.show(err);
        }
      });
    });
    return button;
  }

  /** The form that adds and changes a hand-made entry: a question and answer, or a page. */
  function entryEditor() {
    const formId = uid('entry');
    const heading = h('h3', { id: `${formId}-title` }, 'Add a question and answer');
    const typeQa = /** @type {HTMLInputElement} */ (h('input', { type: 'radio', name: `${formId}-type`, value: 'qa', id: `${formId}-qa`, checked: true }));
    const typePage = /** @type {HTMLInputElement} */ (h('input', { type: 'radio', name: `${formId}-type`, value: 'page', id: `${formId}-page` }));
    const title = /** @type {HTMLInputElement} */ (h('input', { type: 'text', name: 'title', required: true, maxlength: 300, autocomplete: 'off' }));
    const text = /** @type {HTMLTextAreaElement} */ (h('textarea', { name: 'text', required: true, rows: 5 }));
    const language = /** @type {HTMLSelectElement} */ (h('select', { name: 'language' }, LANGUAGES.map(([code, name]) => h('option', { value: code }, name))));
    const titleField = field('Question', title, 'As a customer would ask it.');
    const textField = field('Answer', text, 'Plain text; leave a blank line between paragraphs.');
    const titleLabel = /** @type {HTMLLabelElement} */ (titleField.querySelector('label'));
    const textLabel = /** @type {HTMLLabelElement} */ (textField.querySelector('label'));
    const titleHint = /** @type {HTMLElement} */ (titleField.querySelector('.hint'));
    /** @type {Record<string, HTMLElement>} */
    const errors = {};
    for (const [name, f] of /** @type {const} */ ([['title', titleField], ['text', textField]])) {
      errors[name] = h('p', { class: 'error', id: uid('err'), hidden: true });
      f.append(errors[name]);
    }
    const formError = errorBox();
    const save = h('button', { type: 'submit' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Cancel');
    const saved = h('p', { class: 'copied', role: 'status' });
    /** @type {string | null} */
    let editing = null;

    const kinds = h('fieldset', { class: 'kinds' }, h('legend', {}, 'What are you adding?'),
      h('div', { class: 'row' },
        h('span', { class: 'choice' }, typeQa, h('label', { for: typeQa.id }, 'A question and its answer')),
        h('span', { class: 'choice' }, typePage, h('label', { for: typePage.id }, 'A page'))));
    const form = h('form', { class: 'card', 'aria-labelledby': heading.id, novalidate: true },
      heading, kinds, titleField, textField, field('Language', language, 'The language customers ask in.'), formError.el,
      h('div', { class: 'row' }, save, cancel), saved);

    const showType = () => {
      const qa = typeQa.checked;
      titleLabel.textContent = qa ? 'Question' : 'Title';
      textLabel.textContent = qa ? 'Answer' : 'Text';
      titleHint.textContent = qa ? 'As a customer would ask it.' : 'What the page is about.';
      if (!editing) heading.textContent = qa ? 'Add a question and answer' : 'Add a page';
    };
    typeQa.addEventListener('change', showType);
    typePage.addEventListener('change', showType);

    const clearErrors = () => {
      formError.clear();
      for (const [name, el] of Object.entries(errors)) {
        el.hidden = true;
        el.textContent = '';
        const control = name === 'title' ? title : text;
        control.removeAttribute('aria-invalid');
        control.setAttribute('aria-describedby', control.getAttribute('aria-describedby')?.split(' ').filter((id) => id !== el.id).join(' ') ?? '');
      }
    };
    /** Puts each problem beside its field; focus goes to the first field that is wrong. @param {unknown} err */
    const showErrors = (err) => {
      const details = err instanceof ApiError && Array.isArray(err.details) ? /** @type {{ field: string, message: string }[]} */ (err.details) : [];
      /** @type {HTMLElement | null} */
      let first = null;
      for (const d of details) {
        const el = errors[d.field];
        if (!el) continue;
        const control = d.field === 'title' ? title : text;
        el.textContent = `${d.field === 'title' ? titleLabel.textContent : textLabel.textContent} ${d.message}.`;
        el.hidden = false;
        control.setAttribute('aria-invalid', 'true');
        control.setAttribute('aria-describedby', `${control.getAttribute('aria-describedby') ?? ''} ${el.id}`.trim());
        first ??= control;
      }
      if (first) first.focus();
      else formError.show(err);
    };

    const reset = () => {
      editing = null;
      form.reset();
      typeQa.checked = true;
      language.value = 'en';
      cancel.hidden = true;
      save.textContent = 'Save';
      clearErrors();
      showType();
    };
    cancel.addEventListener('click', () => {
      reset();
      title.focus();
    });

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      clearErrors();
      saved.textContent = '';
      // An empty field is left out, so the service names it as missing ("Answer is required.").
      const body = {
        type: typeQa.checked ? 'qa' : 'page',
        ...(title.value.trim() ? { title: title.value } : {}),
        ...(text.value.trim() ? { text: text.value } : {}),
        language: language.value,
      };
      void busy(save, async () => {
        try {
          const answer = editing
            ? await api('PUT', `/v1/knowledge/entries/${encodeURIComponent(editing)}`, { body })
            : await api('POST', '/v1/knowledge/entries', { body });
          const what = answer.type === 'qa' ? 'question' : 'page';
          reset();
          saved.textContent = `Saved the ${what} "${String(answer.title)}". Customers get answers from it now.`;
          await loadMine();
        } catch (err) {
          showErrors(err);
        }
      });
    });

    return {
      el: form,
      /** An entry was deleted: the form no longer changes it. @param {string} id */
      forget(id) {
        if (editing === id) reset();
      },
      /** Fills the form with an entry to change it. @param {string} id @param {HTMLButtonElement} button */
      async edit(id, button) {
        listError.clear();
        await busy(button, async () => {
          try {
            const e = await api('GET', `/v1/knowledge/entries/${encodeURIComponent(id)}`);
            clearErrors();
            saved.textContent = '';
            editing = String(e.id);
            (e.type === 'qa' ? typeQa : typePage).checked = true;
            showType();
            heading.textContent = `Change "${String(e.title)}"`;
            title.value = String(e.title);
            text.value = String(e.text);
            language.value = LANGUAGES.some(([code]) => code === e.language) ? String(e.language) : 'en';
            save.textContent = 'Save changes';
            cancel.hidden = false;
            title.focus();
          } catch (err) {
            listError.show(err);
          }
        });
      },
    };
  }

  /** "Try a question": the passages found and the answers the customer would get. */
  function tryPanel() {
    const question = /** @type {HTMLInputElement} */ (h('input', { type: 'text', name: 'question', required: true, maxlength: 2000, autocomplete: 'off' }));
    const language = /** @type {HTMLSelectElement} */ (h('select', { name: 'language' },
      h('option', { value: '' }, 'Tell from the question'), LANGUAGES.map(([code, name]) => h('option', { value: code }, name))));
    const ask = h('button', { type: 'submit' }, 'Try');
    const error = errorBox();
    const result = h('div', { 'aria-live': 'polite' });
    const form = h('form', { class: 'try' }, field('Question', question, 'Ask as a customer would. No conversation is made and nothing is counted.'),
      field('Language', language), error.el, ask);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      error.clear();
      if (!question.value.trim()) {
        error.show('Type a question first.');
        question.focus();
        return;
      }
      void busy(ask, async () => {
        try {
          const answer = await api('POST', '/v1/knowledge/try', { body: { question: question.value, ...(language.value ? { language: language.value } : {}) } });
          if (!stopped) replace(result, tried(answer));
        } catch (err) {
          error.show(err);
        }
      });
    });
    const el = h('section', { class: 'card prominent', 'aria-labelledby': 'try' }, h('h2', { id: 'try' }, 'Try a question'), form, result);
    return { el };
  }

  /** @param {any} r */
  function tried(r) {
    const answers = [h('div', { class: 'answer' },
      h('h4', {}, r.with_integrator ? 'Without your own system' : 'What the customer would get'),
      h('p', { class: 'reply' }, String(r.answer.text)),
      h('p', { class: 'meta' }, h('span', { class: `badge source-${String(r.answer.source)}` }, sourceWords(r.answer.source))))];
    const w = r.with_integrator;
    if (w) {
      const outcome = w.outcome === 'answer'
        ? (w.handled ? `Your system answered in ${w.latency_ms} ms.` : `Your system replied "${String(w.reply)}" in ${w.latency_ms} ms but said it does not handle this question (handled: false), so the built-in AI answers.`)
        : `Your system gave no answer (${String(w.message)}), so the built-in AI answers.`;
      answers.unshift(h('div', { class: 'answer' },
        h('h4', {}, 'With your own system (what customers get)'),
        h('p', { class: 'reply' }, String(w.answer.text)),
        h('p', { class: 'meta' }, h('span', { class: `badge source-${String(w.answer.source)}` }, sourceWords(w.answer.source)), ' ', outcome,
          w.handoff ? ` It also asked to hand the customer over (${w.handoff === 'human' ? 'to a person' : 'to the team to follow up'}).` : '')));
    }
    const passages = /** @type {any[]} */ (r.passages);
    return h('div', { class: 'tried' },
      h('h3', {}, `Answers to "${String(r.question)}"`),
      h('p', { class: 'meta' }, `Asked in ${languageName(r.language)}.`),
      answers,
      h('h3', {}, 'What the knowledge base found'),
      passages.length === 0
        ? h('p', { class: 'empty' }, 'Nothing matched. Add a question and its answer below so customers get one.')
        : h('ol', { class: 'passages' }, passages.map((p) => h('li', {},
          h('p', { class: 'entry-title' }, h('strong', {}, String(p.title))),
          h('p', { class: 'meta' }, `${matchWords(p)} · ${p.origin === 'sync' ? 'from your plugin' : p.origin === 'dashboard' ? 'written by your team' : 'from the knowledge base'} · ${typeName(p)}`),
          h('p', { class: 'excerpt' }, String(p.excerpt))))));
  }

  /** The website chat's snippet and the sync key (owners and admins). */
  function keySections() {
    const widget = h('div', {}, loading('Loading the widget key…'));
    const sync = h('div', {}, loading('Loading the sync key…'));
    const syncError = errorBox();
    const syncButton = h('button', { type: 'button' }, 'Make a new sync key');
    const syncSecret = h('div', { 'aria-live': 'polite' });
    api('GET', '/v1/keys/widget').then((answer) => {
      if (stopped) return;
      const snippet = `<script src="${location.origin}/widget.js" data-key="${answer.key}" async></script>`;
      const code = h('textarea', { readonly: true, rows: 3, class: 'secret', id: 'snippet', spellcheck: 'false' });
      code.value = snippet;
      const status = h('span', { class: 'copied', role: 'status' });
      replace(widget,
        h('p', {}, 'Paste this line before </body> on every page of your website that should show the chat. The widget key in it can only read, so it may be public.'),
        h('label', { for: 'snippet' }, 'Embed snippet'), code,
        h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => void copyText(snippet, code, status) }, 'Copy the snippet'), status));
    }, (err) => !stopped && replace(widget, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err))));
    // GET /v1/keys/sync answers 404 without a key: asked only when GET /v1/workspace says one exists.
    configured().then((set) => (set.sync_key ? api('GET', '/v1/keys/sync') : Promise.reject(new ApiError(404, 'not_found', 'No sync key yet.')))).then(
      (info) => !stopped && replace(sync, h('p', {}, `A sync key ending in ${String(info.key_hint)} exists since ${when(info.created_at)}.`)),
      (err) => !stopped && replace(sync, err instanceof ApiError && err.status === 404 ? h('p', { class: 'empty' }, 'No sync key yet. Make one for your plugins.') : h('p', { class: 'error', role: 'alert' }, err.message)),
    );
    syncButton.addEventListener('click', () => {
      syncError.clear();
      void busy(syncButton, async () => {
        try {
          const answer = await api('POST', '/v1/keys/sync');
          replace(sync, h('p', {}, `A sync key ending in ${String(answer.key_hint)} exists since ${when(answer.created_at)}.`));
          replace(syncSecret, shownOnce('New sync key', String(answer.key), 'Copy it now into your plugin settings: it is not shown again. The previous sync key no longer works.'));
        } catch (err) {
          syncError.show(err);
        }
      });
    });
    return [
      h('section', { class: 'card', 'aria-labelledby': 'chat' }, h('h2', { id: 'chat' }, 'Website chat'), widget),
      h('section', { class: 'card', 'aria-labelledby': 'sync' }, h('h2', { id: 'sync' }, 'Sync key'),
        h('p', {}, 'The shop and CMS plugins send your pages and products with this key (X-Sync-Key). A new key replaces the old one at once.'),
        sync, syncError.el, syncButton, syncSecret),
    ];
  }

  void loadMine();
  void loadSynced();
  return () => {
    stopped = true;
  };
}
