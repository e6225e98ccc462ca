// @ts-check
/**
 * Knowledge: what the built-in AI answers from (docs/knowledge.md). Owners and admins add their website and files
 * (./knowledge-sources.js), try a question (the passages it finds and what the customer would get, with and without
 * their own system), write pages and question-and-answer pairs by hand, and manage the sync key and the widget snippet;
 * everyone sees the website and files, the hand-made entries and what was sent through the sync API (read-only here:
 * the system that sent it changes it).
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetKnowledgeEntries['entries']>[number]} Entry */
import { ApiError, api, configured, isManager } from './api.js';
import { busy, errorBox, field, h, loading, replace, shownOnce } from './dom.js';
import { when } from './time.js';
import { widgetSnippet } from './public-address.js';
import { entryEditor, languageName, typeName } from './knowledge-editor.js';
import { sourcesSection } from './knowledge-sources.js';
import { checksPanel } from './knowledge-checks.js';
import { tryPanel } from './knowledge-try.js';

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderKnowledge(main, ctx) {
  const manager = isManager(ctx.session);
  let stopped = false;
  const mine = h('div', { 'aria-busy': 'true' }, loading('Loading your pages and questions…'));
  const synced = h('div', { 'aria-busy': 'true' }, loading('Loading what was sent with the sync key…'));
  const listError = errorBox();

  const isStopped = () => stopped;

  const editor = manager ? entryEditor({ listError, reload: loadMine }) : null;
  // Saved questions asked again after each change (docs/scenarios.md, "Answers a knowledge change moved").
  const checks = manager ? checksPanel(isStopped) : null;
  const tryBox = manager ? tryPanel(isStopped, () => void checks?.reload()) : null;
  const sources = sourcesSection({ manager, isStopped });
  // What the AI's questions for each passage cost (docs/knowledge.md, "Questions written by the AI"); shown once known.
  const aiQuestions = h('p', { class: 'meta', id: 'ai-questions', hidden: true });
  // The embeddings of passages (docs/knowledge.md, "Embeddings"): a sibling line, only when the service makes them.
  const aiEmbeddings = h('p', { class: 'meta', id: 'ai-embeddings', hidden: true });
  replace(main, h('h1', {}, 'Knowledge'),
    h('p', {}, 'The built-in AI answers customers from your website, your files and these pages and questions.'),
    aiQuestions,
    aiEmbeddings,
    sources.el,
    tryBox?.el,
    checks?.el,
    h('section', { 'aria-labelledby': 'mine' }, h('h2', { id: 'mine', tabindex: -1 }, 'Your pages and questions'),
      h('p', { class: 'hint' }, manager ? 'Written here by your team. Customers get answers from them as soon as they are saved.' : 'Written by the owners and admins of this workspace.'),
      editor?.el, listError.el, mine),
    h('section', { 'aria-labelledby': 'synced' }, h('h2', { id: 'synced' }, 'Sent with the sync key'),
      h('p', { class: 'hint' }, 'Pages and products a system of yours sends through the sync API. Change them where they come from: they are read-only here.'),
      synced),
    manager ? keySections(isStopped) : null);

  async function loadMine() {
    try {
      /** @type {Api.GetKnowledgeEntries} */
      const answer = await api('GET', '/v1/knowledge/entries?origin=dashboard&limit=200');
      if (stopped) return;
      mine.setAttribute('aria-busy', 'false');
      const entries = answer.entries ?? [];
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
      /** @type {Api.GetKnowledgeEntries} */
      const answer = await api('GET', '/v1/knowledge/entries?origin=sync&limit=200');
      if (stopped) return;
      synced.setAttribute('aria-busy', 'false');
      const items = answer.entries ?? [];
      if (items.length === 0) {
        replace(synced, h('p', { class: 'empty' }, 'Nothing synced yet. A developer can send pages and products with the sync key (PUT /v1/sync/pages/{external_id}); for your website, add it above.'));
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

  /** One entry of a list: its title, what it is, an excerpt and, for hand-made ones, Edit and Delete. @param {Entry} e @param {boolean} own */
  function entryItem(e, own) {
    const title = String(e.title);
    const facts = [typeName(e), languageName(e.language), `${own ? 'changed' : 'synced'} ${when(e.updated_at)}`];
    if (!own && e.external_id) facts.push(`id ${String(e.external_id)}`);
    const actions = own && manager && editor ? h('div', { class: 'row' },
      h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit ${title}`, onclick: (/** @type {Event} */ ev) => void editor.edit(String(e.id), /** @type {HTMLButtonElement} */ (ev.currentTarget)) }, 'Edit'),
      deleteButton(String(e.id), title)) : null;
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


  async function loadAiQuestions() {
    try {
      /** @type {Api.GetKnowledgeAiQuestions} */
      const answer = await api('GET', '/v1/knowledge/ai-questions');
      if (stopped) return;
      const count = (/** @type {unknown} */ n) => Number(n).toLocaleString('en');
      const embeddings = answer.embeddings;
      if (embeddings) {
        aiEmbeddings.textContent = `Passages the AI compares by meaning: ${count(embeddings.passages)}, ${count(embeddings.tokens)} tokens used.`;
        aiEmbeddings.hidden = false;
      }
      if (!answer.enabled && Number(answer.questions) === 0) return;
      aiQuestions.textContent = `Questions written by the AI: ${count(answer.questions)} for ${count(answer.passages)} passages, ${count(answer.tokens)} tokens used.`;
      aiQuestions.hidden = false;
    } catch {
      // A figure, not a feature: the screen works without it.
    }
  }

  void loadMine();
  void loadSynced();
  void loadAiQuestions();
  return () => {
    stopped = true;
    sources.stop();
  };
}

/** The website chat's snippet and the sync key (owners and admins). @param {() => boolean} isStopped */
function keySections(isStopped) {
  const widget = h('div', {}, loading('Loading the widget key…'));
  const sync = h('div', {}, loading('Loading the sync key…'));
  const syncError = errorBox();
  const syncButton = h('button', { type: 'button' }, 'Make a new sync key');
  const syncSecret = h('div', { 'aria-live': 'polite' });
  // The same line as Channels → Website chat, with the service's public address (PUBLIC_URL), not this page's.
  Promise.all([/** @type {Promise<Api.GetKeysWidget>} */ (api('GET', '/v1/keys/widget')), /** @type {Promise<Api.GetChannelsSetup>} */ (api('GET', '/v1/channels/setup'))]).then(([answer, setup]) => {
    if (isStopped()) return;
    replace(widget,
      widgetSnippet(String(setup.widget?.script_url), String(answer.key)),
      h('p', {}, 'Which websites may show it, and the switch that turns it on: ', h('a', { href: '/dashboard/channels', 'data-link': true }, 'Channels → Website chat'), '.'));
  }, (err) => !isStopped() && replace(widget, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err))));
  // GET /v1/keys/sync answers 404 without a key: asked only when GET /v1/workspace says one exists.
  configured().then((set) => (set.sync_key ? /** @type {Promise<Api.GetKeysSync>} */ (api('GET', '/v1/keys/sync')) : Promise.reject(new ApiError(404, 'not_found', 'No sync key yet.')))).then(
    (info) => !isStopped() && replace(sync, h('p', {}, `A sync key ending in ${String(info.key_hint)} exists since ${when(info.created_at)}.`)),
    (err) => !isStopped() && replace(sync, err instanceof ApiError && err.status === 404 ? h('p', { class: 'empty' }, 'No sync key yet. Make one when a system of yours should send pages.') : h('p', { class: 'error', role: 'alert' }, err.message)),
  );
  syncButton.addEventListener('click', () => {
    syncError.clear();
    void busy(syncButton, async () => {
      try {
        /** @type {Api.PostKeysSync} */
        const answer = await api('POST', '/v1/keys/sync');
        replace(sync, h('p', {}, `A sync key ending in ${String(answer.key_hint)} exists since ${when(answer.created_at)}.`));
        replace(syncSecret, shownOnce('New sync key', String(answer.key), 'Copy it now into the settings of the system that sends your pages: it is not shown again. The previous sync key no longer works.'));
      } catch (err) {
        syncError.show(err);
      }
    });
  });
  return [
    h('section', { class: 'card', 'aria-labelledby': 'chat' }, h('h2', { id: 'chat' }, 'Website chat'), widget),
    h('section', { class: 'card', 'aria-labelledby': 'sync' }, h('h2', { id: 'sync' }, 'Sync key'),
      h('p', {}, 'A system of yours sends pages and products through the sync API with this key (X-Sync-Key). A new key replaces the old one at once.'),
      sync, syncError.el, syncButton, syncSecret),
  ];
}
