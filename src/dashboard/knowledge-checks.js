// @ts-check
/**
 * Knowledge (./knowledge.js), "Answers that changed after your last edit": the questions an owner saved from "Try a
 * question" are asked again after each change of the knowledge (docs/scenarios.md, "Answers a knowledge change
 * moved"); this lists the answers that changed, before and now, with a button that keeps the new one, the tests played
 * again, and the saved questions. Every text (questions, answers, names) is set as text, never as HTML.
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetKnowledgeChanges['change']>} Change */
import { api } from './api.js';
import { busy, errorBox, h, loading, replace } from './dom.js';
import { when } from './time.js';

/** Who gave an answer, in an owner's words. @param {unknown} source */
export function answeredBy(source) {
  return ({
    knowledge_base: 'from the knowledge base',
    ai: 'written by the AI from the knowledge base',
    fallback: 'no fitting answer',
  })[String(source)] ?? 'by the bot';
}

/** @param {unknown} passed @param {unknown} runs */
const passedOf = (passed, runs) => `passed ${Number(passed)} of ${Number(runs)}`;

/**
 * The panel and `reload`, which "Save this question" calls once a question is saved.
 * @param {() => boolean} isStopped
 */
export function checksPanel(isStopped) {
  const status = h('p', { class: 'meta', role: 'status' });
  const changedList = h('div', { 'aria-busy': 'true' }, loading('Loading the answers that changed…'));
  const savedList = h('div', {});
  const error = errorBox();
  const heading = h('h2', { id: 'changes', tabindex: -1 }, 'Answers that changed after your last edit');
  const el = h('section', { class: 'card', 'aria-labelledby': 'changes' }, heading,
    h('p', { class: 'hint' }, 'Questions you saved from "Try a question" are asked again after each change to your knowledge. An answer that changed is shown here until you keep it.'),
    status, error.el, changedList,
    h('h3', { id: 'saved-checks' }, 'Questions you check'), savedList);

  async function reload() {
    try {
      const [changes, saved] = await Promise.all([
        /** @type {Promise<Api.GetKnowledgeChanges>} */ (api('GET', '/v1/knowledge/changes')),
        /** @type {Promise<Api.GetKnowledgeChecks>} */ (api('GET', '/v1/knowledge/checks')),
      ]);
      if (isStopped()) return;
      changedList.setAttribute('aria-busy', 'false');
      showChanges(changes);
      showSaved(saved.checks ?? []);
    } catch (err) {
      if (!isStopped()) error.show(err);
    }
  }

  /** @param {Api.GetKnowledgeChanges} answer */
  function showChanges(answer) {
    const change = answer.change;
    status.textContent = answer.pending
      ? 'Your knowledge changed: the saved questions are asked again once you have stopped editing for a moment.'
      : change ? `Last asked again ${when(change.finished_at)}: ${Number(change.same)} of ${Number(change.checks)} answers stayed the same.` : '';
    if (!change) {
      replace(changedList, h('p', { class: 'empty' }, 'Nothing asked again yet.'));
      return;
    }
    const changed = change.changed ?? [];
    const tests = change.scenarios ?? [];
    replace(changedList,
      changed.length === 0 ? h('p', { class: 'empty' }, 'No answer changed.') : h('ul', { class: 'entries' }, changed.map(changedItem)),
      tests.length === 0 ? null : [h('h3', {}, 'Tests played again'), h('ul', { class: 'entries' }, tests.map(testItem))]);
  }

  /** @param {NonNullable<Change['changed']>[number]} c */
  function changedItem(c) {
    const question = String(c.question);
    const keep = h('button', { type: 'button', 'aria-label': `Keep the new answer to ${question}` }, 'Keep the new answer');
    keep.addEventListener('click', () => {
      error.clear();
      void busy(keep, async () => {
        try {
          await api('POST', `/v1/knowledge/checks/${encodeURIComponent(String(c.check_id))}/accept`);
          await reload();
          heading.focus();
        } catch (err) {
          error.show(err);
        }
      });
    });
    return h('li', { class: 'entry' },
      h('p', { class: 'entry-title' }, h('strong', {}, question)),
      h('p', { class: 'excerpt' }, h('strong', {}, 'Before: '), String(c.before?.text)),
      h('p', { class: 'meta' }, `Answered ${answeredBy(c.before?.source)}.`),
      h('p', { class: 'excerpt' }, h('strong', {}, 'Now: '), String(c.after?.text)),
      h('p', { class: 'meta' }, `Answered ${answeredBy(c.after?.source)}.`),
      c.accepted ? h('p', { class: 'meta' }, 'Kept as the expected answer.') : h('div', { class: 'row' }, keep));
  }

  /** @param {NonNullable<Change['scenarios']>[number]} t */
  function testItem(t) {
    const after = t.after?.status === 'done' ? passedOf(t.after.passed, t.after.runs) : t.after?.status === 'running' ? 'still playing' : 'no longer kept';
    return h('li', { class: 'entry' },
      h('p', { class: 'entry-title' }, h('a', { href: `/dashboard/tests/${encodeURIComponent(String(t.scenario_id))}`, 'data-link': true }, String(t.name))),
      h('p', { class: 'meta' }, `Before your change: ${passedOf(t.before?.passed, t.before?.runs)}. Now: ${after}.`));
  }

  /** @param {NonNullable<Api.GetKnowledgeChecks['checks']>} checks */
  function showSaved(checks) {
    if (checks.length === 0) {
      replace(savedList, h('p', { class: 'empty' }, 'No saved questions yet. Try a question above and save it to be told when its answer changes.'));
      return;
    }
    replace(savedList, h('ul', { class: 'entries' }, checks.map((c) => {
      const question = String(c.question);
      const remove = h('button', { type: 'button', class: 'quiet', 'aria-label': `Stop checking ${question}` }, 'Stop checking');
      remove.addEventListener('click', () => {
        error.clear();
        void busy(remove, async () => {
          try {
            await api('DELETE', `/v1/knowledge/checks/${encodeURIComponent(String(c.id))}`);
            await reload();
            /** @type {HTMLElement | null} */ (el.querySelector('#saved-checks'))?.setAttribute('tabindex', '-1');
            /** @type {HTMLElement | null} */ (el.querySelector('#saved-checks'))?.focus();
          } catch (err) {
            error.show(err);
          }
        });
      });
      return h('li', { class: 'entry' },
        h('p', { class: 'entry-title' }, h('strong', {}, question)),
        h('p', { class: 'excerpt' }, h('strong', {}, 'Expected: '), String(c.answer?.text)),
        h('div', { class: 'row' }, remove));
    })));
  }

  void reload();
  return { el, reload };
}
