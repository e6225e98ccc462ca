// @ts-check
/**
 * Knowledge (./knowledge.js), "Try a question": owners and admins ask as a customer would and see the passages the
 * knowledge base finds and what the customer would get, with and without their own system (docs/knowledge.md).
 */
/** @import * as Api from './api-types' */
import { api } from './api.js';
import { busy, errorBox, field, h, replace } from './dom.js';
import { LANGUAGES, languageName, typeName } from './knowledge-editor.js';

/** What a reply's source means to an owner. @param {string | undefined} source */
function sourceWords(source) {
  return (/** @type {Record<string, string>} */ ({
    integrator: 'Answered by your own system',
    knowledge_base: 'Answered from the knowledge base',
    ai: 'Written by the AI from the knowledge base',
    fallback: 'No fitting answer: the customer is told so and offered the team',
  }))[String(source)] ?? source;
}

/** Where a passage comes from, in words. @param {unknown} origin */
function originWords(origin) {
  return ({ sync: 'sent with the sync key', dashboard: 'written by your team', website: 'from your website', file: 'from your files' })[String(origin)] ?? 'from the knowledge base';
}

/** A passage's score in words, the number beside it. @param {{ match?: string, score?: number }} p */
function matchWords(p) {
  const words = { strong: 'Strong match', fair: 'Fair match', weak: 'Weak match: too weak to answer from' }[String(p.match)] ?? 'Match';
  return `${words} (score ${Number(p.score).toFixed(2)})`;
}

/**
 * "Try a question": the passages found and the answers the customer would get. An answer that comes after the screen
 * was left is not shown.
 * @param {() => boolean} isStopped
 * @param {() => void} [onSaved] a question was saved as a check (./knowledge-checks.js lists it)
 */
export function tryPanel(isStopped, onSaved) {
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
        /** @type {Api.PostKnowledgeTry} */
        const answer = await api('POST', '/v1/knowledge/try', { body: { question: question.value, ...(language.value ? { language: language.value } : {}) } });
        if (!isStopped()) replace(result, tried(answer), saveButton(answer));
      } catch (err) {
        error.show(err);
      }
    });
  });
  /** "Save this question": kept with the answer it gets now, and asked again after each change (docs/scenarios.md). @param {Api.PostKnowledgeTry} r */
  function saveButton(r) {
    const save = h('button', { type: 'button' }, 'Save this question');
    const saved = h('p', { class: 'meta', role: 'status' });
    const saveError = errorBox();
    save.addEventListener('click', () => {
      saveError.clear();
      void busy(save, async () => {
        try {
          await api('POST', '/v1/knowledge/checks', { body: { question: String(r.question), language: String(r.language) } });
          saved.textContent = 'Saved: you are told below when a change to your knowledge changes its answer.';
          save.hidden = true;
          onSaved?.();
        } catch (err) {
          saveError.show(err);
        }
      });
    });
    return h('div', { class: 'save-check' }, h('p', { class: 'hint' }, 'Save it to be told when a change to your knowledge changes this answer.'), saveError.el, save, saved);
  }
  const el = h('section', { class: 'card prominent', 'aria-labelledby': 'try' }, h('h2', { id: 'try' }, 'Try a question'), form, result);
  return { el };
}

/** @param {Api.PostKnowledgeTry} r */
function tried(r) {
  const answers = [h('div', { class: 'answer' },
    h('h4', {}, r.with_integrator ? 'Without your own system' : 'What the customer would get'),
    h('p', { class: 'reply' }, String(r.answer?.text)),
    h('p', { class: 'meta' }, h('span', { class: `badge source-${String(r.answer?.source)}` }, sourceWords(r.answer?.source))))];
  const w = r.with_integrator;
  if (w) {
    const outcome = w.outcome === 'answer'
      ? (w.handled ? `Your system answered in ${w.latency_ms} ms.` : `Your system replied "${String(w.reply)}" in ${w.latency_ms} ms but said it does not handle this question (handled: false), so the built-in AI answers.`)
      : `Your system gave no answer (${String(w.message)}), so the built-in AI answers.`;
    answers.unshift(h('div', { class: 'answer' },
      h('h4', {}, 'With your own system (what customers get)'),
      h('p', { class: 'reply' }, String(w.answer?.text)),
      h('p', { class: 'meta' }, h('span', { class: `badge source-${String(w.answer?.source)}` }, sourceWords(w.answer?.source)), ' ', outcome,
        w.handoff ? ` It also asked to hand the customer over (${w.handoff === 'human' ? 'to a person' : 'to the team to follow up'}).` : '')));
  }
  const passages = r.passages ?? [];
  return h('div', { class: 'tried' },
    h('h3', {}, `Answers to "${String(r.question)}"`),
    h('p', { class: 'meta' }, `Asked in ${languageName(r.language)}.`),
    answers,
    h('h3', {}, 'What the knowledge base found'),
    passages.length === 0
      ? h('p', { class: 'empty' }, 'Nothing matched. Add a question and its answer below so customers get one.')
      : h('ol', { class: 'passages' }, passages.map((p) => h('li', {},
        h('p', { class: 'entry-title' }, h('strong', {}, String(p.title))),
        h('p', { class: 'meta' }, `${matchWords(p)} · ${originWords(p.origin)} · ${typeName(p)}`),
        h('p', { class: 'excerpt' }, String(p.excerpt))))));
}
