// @ts-check
/**
 * Knowledge (./knowledge.js): the words the screen shares (languages, kinds of entry), the form with which owners
 * and admins write pages and question-and-answer pairs by hand (docs/knowledge.md), and the two ways they teach the
 * bot from a customer's question (the Overview, a held conversation): "Add as an answer" and "This page answers it".
 */
/** @import * as Api from './api-types' */
import { ApiError, api } from './api.js';
import { busy, errorBox, field, h, loading, replace, uid } from './dom.js';

/** The languages the form offers; the search stems English and Dutch, the others are matched word for word. */
export const LANGUAGES = [['en', 'English'], ['nl', 'Dutch (Nederlands)'], ['de', 'German (Deutsch)'], ['fr', 'French (Français)']];
/** @param {string | null | undefined} code */
export const languageName = (code) => LANGUAGES.find(([c]) => c === code)?.[1] ?? (code ? code : 'no language set');

/** @param {{ type?: string }} e an entry of the knowledge base */
export function typeName(e) {
  if (e.type === 'qa') return 'Question and answer';
  if (e.type === 'product') return 'Product';
  return 'Page';
}

/**
 * The form that adds and changes a hand-made entry: a question and answer, or a page. A failed load for a change shows
 * in the list's error box; after a save the list is read again.
 * @param {{ listError: ReturnType<typeof errorBox>, reload: () => Promise<void> }} deps
 */
export function entryEditor({ listError, reload }) {
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
        /** @type {Api.PutKnowledgeEntriesId | Api.PostKnowledgeEntries} */
        const answer = editing
          ? await api('PUT', `/v1/knowledge/entries/${encodeURIComponent(editing)}`, { body })
          : await api('POST', '/v1/knowledge/entries', { body });
        const what = answer.type === 'qa' ? 'question' : 'page';
        reset();
        saved.textContent = `Saved the ${what} "${String(answer.title)}". Customers get answers from it now.`;
        await reload();
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
          /** @type {Api.GetKnowledgeEntriesId} */
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

/**
 * "Add as an answer" (docs/knowledge.md, "The team teaches the bot"): the customer's question, an answer (the team's
 * reply when there is one), Save. The question is shown as text, never as markup: it is the customer's.
 * @param {{ sessionId: string, question: string, answer?: string, language?: string | null }} o
 */
export function addAnswerForm({ sessionId, question, answer = '', language = null }) {
  const formId = uid('teach');
  const text = /** @type {HTMLTextAreaElement} */ (h('textarea', { name: 'answer', rows: 4, required: true }));
  text.value = answer;
  const textField = field('Answer', text, 'What the bot should say when a customer asks this. Plain text.');
  const error = errorBox();
  const saved = h('p', { class: 'copied', role: 'status' });
  const save = h('button', { type: 'submit' }, 'Save');
  const heading = h('h3', { id: `${formId}-title` }, 'Add as an answer');
  const form = h('form', { class: 'teach', 'aria-labelledby': heading.id, novalidate: true, 'data-testid': 'add-answer' },
    heading,
    h('p', { class: 'label' }, 'The customer asked:'),
    h('blockquote', { class: 'question' }, question),
    textField, error.el, h('div', { class: 'row' }, save), saved);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    saved.textContent = '';
    if (!text.value.trim()) {
      error.show(new Error('Write the answer first.'));
      text.focus();
      return;
    }
    void busy(save, async () => {
      try {
        await api('POST', '/v1/knowledge/entries/from-conversation', {
          body: { session_id: sessionId, question, answer: text.value, ...(language ? { language } : {}) },
        });
        saved.textContent = 'Saved. Customers who ask this now get your answer; you find it under Knowledge.';
      } catch (err) {
        error.show(err);
        text.focus();
      }
    });
  });
  return { el: form, focus: () => text.focus() };
}

/**
 * "This page answers it": the knowledge is searched with the customer's question, its best passages are listed with
 * their title and a piece of their text, and the one chosen gets the question as another way of asking it. It can be
 * taken back at once.
 * @param {{ question: string, language?: string | null }} o
 */
export function pageAnswersIt({ question, language = null }) {
  const formId = uid('pick');
  const heading = h('h3', { id: `${formId}-title` }, 'This page answers it');
  const list = h('div', { 'aria-live': 'polite' }, loading('Looking for pages that answer it…'));
  const error = errorBox();
  const done = h('p', { class: 'copied', role: 'status' });
  const choose = h('button', { type: 'submit', hidden: true }, 'This page answers it');
  const form = h('form', { class: 'teach', 'aria-labelledby': heading.id, novalidate: true, 'data-testid': 'page-answers-it' },
    heading,
    h('p', { class: 'label' }, 'The customer asked:'),
    h('blockquote', { class: 'question' }, question),
    list, error.el, h('div', { class: 'row' }, choose), done);

  /** @type {HTMLInputElement[]} */
  let choices = [];
  (async () => {
    try {
      const q = new URLSearchParams({ question: question.slice(0, 1000), ...(language ? { language } : {}) });
      /** @type {Api.GetKnowledgePassages} */
      const answer = await api('GET', `/v1/knowledge/passages?${q}`);
      const passages = answer.passages ?? [];
      if (passages.length === 0) {
        replace(list, h('p', { class: 'empty' }, 'No page of your knowledge comes close. Add the answer instead.'));
        return;
      }
      choices = passages.map((p, i) => /** @type {HTMLInputElement} */ (h('input', { type: 'radio', name: `${formId}-passage`, value: p.id, id: `${formId}-${i}`, checked: i === 0 })));
      replace(list, h('fieldset', { class: 'passages-choice' },
        h('legend', {}, 'Which page answers it?'),
        h('ol', { class: 'passages' }, passages.map((p, i) => h('li', {},
          h('span', { class: 'choice' }, choices[i],
            h('label', { for: choices[i]?.id ?? '' }, h('strong', {}, p.title))),
          h('p', { class: 'excerpt' }, p.excerpt))))));
      choose.hidden = false;
    } catch (err) {
      replace(list);
      error.show(err);
    }
  })();

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    const chosen = choices.find((c) => c.checked);
    if (!chosen) return;
    const title = chosen.labels?.[0]?.textContent ?? 'the page';
    void busy(choose, async () => {
      try {
        /** @type {Api.PostKnowledgePhrasings | Api.PostKnowledgePhrasings201} */
        const added = await api('POST', '/v1/knowledge/phrasings', { body: { passage_id: chosen.value, text: question } });
        const undo = h('button', { type: 'button', class: 'quiet' }, 'Take it back');
        undo.addEventListener('click', () => void busy(undo, async () => {
          try {
            await api('DELETE', `/v1/knowledge/phrasings/${encodeURIComponent(String(added.id))}`);
            replace(done, 'Taken back: that page no longer answers this question.');
            choose.focus();
          } catch (err) {
            error.show(err);
          }
        }));
        replace(done, `Done: “${title}” now answers this question, in these words too. `, undo);
      } catch (err) {
        error.show(err);
      }
    });
  });
  return { el: form, focus: () => (choices.find((c) => c.checked) ?? choose).focus() };
}
