// @ts-check
/**
 * Knowledge: what the knowledge base holds (pages and products, read with the widget key), the sync key for the
 * shop and CMS plugins (shown once), and the widget key with the snippet that puts the chat on a website.
 */
import { ApiError, api } from './api.js';
import { busy, copyText, errorBox, h, loading, replace, shownOnce, when } from './dom.js';

/** @param {HTMLElement} main */
export function renderKnowledge(main) {
  const widget = h('div', {}, loading('Loading the widget key…'));
  const sync = h('div', {}, loading('Loading the sync key…'));
  const syncError = errorBox();
  const syncButton = h('button', { type: 'button' }, 'Make a new sync key');
  const syncSecret = h('div', { 'aria-live': 'polite' });
  const pages = h('div', {}, loading('Loading pages…'));
  const products = h('div', {}, loading('Loading products…'));
  replace(main, h('h1', {}, 'Knowledge'),
    h('section', { class: 'card', 'aria-labelledby': 'chat' }, h('h2', { id: 'chat' }, 'Website chat'), widget),
    h('section', { class: 'card', 'aria-labelledby': 'sync' }, h('h2', { id: 'sync' }, 'Sync key'),
      h('p', {}, 'The shop and CMS plugins send your pages and products with this key (X-Sync-Key). A new key replaces the old one at once.'),
      sync, syncError.el, syncButton, syncSecret),
    h('section', { 'aria-labelledby': 'pages' }, h('h2', { id: 'pages' }, 'Pages'), pages),
    h('section', { 'aria-labelledby': 'products' }, h('h2', { id: 'products' }, 'Products'), products));

  let stopped = false;
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
    for (const [kind, el] of /** @type {const} */ ([['pages', pages], ['products', products]])) void list(kind, el, answer.key);
  }, (err) => {
    if (stopped) return;
    replace(widget, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
    replace(pages);
    replace(products);
  });

  /** @param {'pages' | 'products'} kind @param {HTMLElement} el @param {string} key */
  async function list(kind, el, key) {
    try {
      const answer = await api('GET', `/v1/sync/${kind}?limit=100`, { headers: { 'x-widget-key': key } });
      if (stopped) return;
      const items = Array.isArray(answer[kind]) ? answer[kind] : Array.isArray(answer.items) ? answer.items : [];
      if (items.length === 0) {
        replace(el, h('p', { class: 'empty' }, `No ${kind} yet. Install the shop or CMS plugin with the sync key above, or send them with PUT /v1/sync/${kind}/{external_id}.`));
        return;
      }
      const last = items.map((/** @type {any} */ p) => String(p.updated_at ?? '')).sort().at(-1);
      /** @type {{ text: string; el: HTMLElement }[]} */
      const rows = items.map((/** @type {any} */ p) => {
        const title = String(p.title ?? p.name ?? p.external_id);
        return { text: `${title} ${String(p.external_id)}`.toLowerCase(), el: h('li', {}, h('strong', {}, title), ` (${String(p.external_id)}${p.language ? `, ${String(p.language)}` : ''}) · ${when(p.updated_at)}`) };
      });
      const search = /** @type {HTMLInputElement} */ (h('input', { type: 'search', id: `search-${kind}`, autocomplete: 'off' }));
      const shown = h('p', { class: 'meta', role: 'status' });
      const listEl = h('ul', { class: 'plain' });
      const filter = () => {
        const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
        const matching = rows.filter((r) => words.every((w) => r.text.includes(w)));
        replace(listEl, ...matching.map((r) => r.el));
        shown.textContent = `${answer.next_cursor ? `The first ${items.length}` : `${items.length}`} ${kind}; last synced ${when(last)}${words.length ? `; ${matching.length} match` : ''}.`;
      };
      search.addEventListener('input', filter);
      replace(el, h('label', { for: `search-${kind}` }, `Search the ${kind}`), search, shown, listEl);
      filter();
    } catch (err) {
      if (!stopped) replace(el, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
    }
  }

  api('GET', '/v1/keys/sync').then(
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
  return () => {
    stopped = true;
  };
}
