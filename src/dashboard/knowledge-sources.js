// @ts-check
/**
 * Knowledge (./knowledge.js), "Your website and files": owners and admins add their website (a start page or a
 * sitemap, updated every day, every week or only when asked) and upload files; everyone sees the list of sources with
 * their progress, skipped pages and last update (docs/knowledge.md, "Websites and files"). While a source is read, the
 * list asks again every few seconds, and stops when nothing is being read or the screen is left.
 *
 * Addresses, file names and reasons come from outside: they are only ever set as text.
 */
/** @import * as Api from './api-types' */
/** A website, sitemap or file the knowledge is read from (GET /v1/knowledge/sources). @typedef {NonNullable<Api.GetKnowledgeSources['sources']>[number]} Source */
import { ApiError, api } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, replace, showFieldErrors, uid } from './dom.js';
import { formatTime } from './time.js';
import { LANGUAGES } from './knowledge-editor.js';

/** The largest file the service takes (docs/knowledge.md, "Websites and files"): refused here before it is sent. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** How often the list is asked again while a source is being read. */
const REFRESH_MS = 3_000;
/** What the file field offers; the service reads the content, not the name, to tell what a file is. */
const FILE_TYPES = '.pdf,.docx,.txt,.md,.markdown,.html,.htm,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document,text/plain,text/markdown,text/html';

/** A source's kind in words. @type {Record<string, string>} */
export const SOURCE_KINDS = { website: 'Website', sitemap: 'Sitemap', file: 'File' };

/** A source's state in an owner's words (never the engine's state names). @type {Record<string, string>} */
export const SOURCE_STATUS = { queued: 'Waiting to start', syncing: 'Reading your pages…', done: 'Up to date', failed: 'Could not be read' };

/** A source's state in words; a file is not "your pages". @param {Source} s */
export function statusWords(s) {
  if (s.kind === 'file' && s.status === 'syncing') return 'Reading the file…';
  return SOURCE_STATUS[String(s.status)] ?? String(s.status);
}

/** How often a website is read again. @type {[string, string][]} */
const SCHEDULES = [['daily', 'Every day'], ['weekly', 'Every week'], ['manual', 'Only when I ask']];

/** True while the service still reads a source. @param {Source} s */
const reading = (s) => s.status === 'queued' || s.status === 'syncing';

/** A count in words: "1 page", "12 pages". @param {number} n @param {string} one @param {string} [many] */
const count = (n, one, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/**
 * What a source's numbers say: found, read and skipped pages (those the service sends).
 * @param {Source} s
 */
export function progressWords(s) {
  const num = (/** @type {unknown} */ v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  const pages = num(s.pages);
  const found = num(s.found);
  const fetched = num(s.fetched);
  const skipped = Array.isArray(s.skipped) ? s.skipped.length : null;
  const parts = [];
  // A file is one document: its size says more than a count.
  if (s.kind === 'file') return typeof s.file?.bytes === 'number' ? sizeWords(s.file.bytes) : '';
  if (found != null) parts.push(`${count(found, 'page')} found`);
  if (fetched != null && reading(s)) parts.push(`${fetched.toLocaleString()} read so far`);
  if (pages != null && (!reading(s) || fetched == null)) parts.push(found != null ? `${pages.toLocaleString()} read` : `${count(pages, 'page')} read`);
  if (skipped) parts.push(`${skipped.toLocaleString()} skipped`);
  return parts.join(', ');
}

/**
 * The section: the forms (owners and admins) and the list of sources.
 * @param {{ manager: boolean, isStopped: () => boolean }} deps
 */
export function sourcesSection({ manager, isStopped }) {
  const list = h('div', { 'aria-busy': 'true' }, h('p', { class: 'loading', role: 'status' }, 'Loading your website and files…'));
  const listError = errorBox();
  // Said once when a source is added or finishes, not at every refresh.
  const announce = h('p', { class: 'copied', role: 'status' });
  /** @type {Map<string, ReturnType<typeof sourceRow>>} */
  const rows = new Map();
  const listEl = h('ul', { class: 'sources' });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** @type {Set<string>} */
  const watching = new Set();

  const heading = h('h2', { id: 'sources', tabindex: -1 }, 'Your website and files');
  const forms = manager ? [websiteForm(), fileForm()] : [];
  const el = h('section', { 'aria-labelledby': 'sources' }, heading,
    h('p', { class: 'hint' }, manager
      ? 'Customers get answers from the pages of your website and from your files. The website is read again on its schedule; only pages that changed are read again.'
      : 'Added by the owners and admins of this workspace.'),
    forms.length ? h('div', { class: 'source-forms' }, forms) : null,
    announce, listError.el, list);

  /** In the workspace's time zone, as every screen shows times (time.js), with the zone's name. @param {string | null | undefined} iso */
  function at(iso) {
    if (!iso) return 'not yet';
    return formatTime(iso, { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
  }

  async function load() {
    clearTimeout(timer);
    timer = undefined;
    try {
      /** @type {Api.GetKnowledgeSources | null} */
      const answer = await api('GET', '/v1/knowledge/sources');
      if (isStopped()) return;
      show(answer?.sources ?? []);
    } catch (err) {
      if (isStopped()) return;
      if (rows.size === 0) replace(list, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
      else listError.show(err);
    }
    if (!isStopped() && [...rows.values()].some((r) => reading(r.source))) timer = setTimeout(() => void load(), REFRESH_MS);
  }

  /** @param {Source[]} sources */
  function show(sources) {
    list.setAttribute('aria-busy', 'false');
    listError.clear();
    const seen = new Set();
    for (const s of sources) {
      const id = String(s.id);
      seen.add(id);
      const row = rows.get(id);
      if (row) row.update(s);
      else rows.set(id, sourceRow(s));
      // One that was being read and is read now: said once.
      if (watching.has(id) && !reading(s)) {
        watching.delete(id);
        announce.textContent = s.status === 'done'
          ? `${nameOf(s)} is up to date${progressWords(s) ? `: ${progressWords(s)}` : ''}.`
          : `${nameOf(s)} could not be read.`;
      } else if (reading(s)) watching.add(id);
    }
    for (const [id, row] of rows) {
      if (seen.has(id)) continue;
      row.el.remove();
      rows.delete(id);
    }
    // Put in order only when the order changed: moving a row would take the focus off its buttons.
    const wanted = sources.map((s) => rows.get(String(s.id))?.el).filter((e) => e != null);
    if (wanted.length !== listEl.children.length || wanted.some((e, i) => listEl.children[i] !== e)) replace(listEl, wanted);
    if (sources.length === 0) {
      replace(list, h('p', { class: 'empty' }, manager ? 'No website or file yet. Add your website above: customers get answers from its pages.' : 'No website or file yet.'));
    } else if (!list.contains(listEl)) {
      replace(list, listEl);
    }
  }

  /** A source's place in the list; updated in place at each refresh, so focus on its buttons stays. @param {Source} first */
  function sourceRow(first) {
    let source = first;
    const kind = h('span', { class: 'badge' });
    const name = h('p', { class: 'source-name' });
    const status = h('span', { class: 'source-status' });
    const numbers = h('span');
    const updated = h('p', { class: 'meta' });
    const failure = h('p', { class: 'error', hidden: true });
    const skippedBox = h('div');
    const actions = manager ? h('div', { class: 'row' }) : null;
    const updateButton = h('button', { type: 'button', class: 'quiet' }, 'Update now');
    const removeButton = h('button', { type: 'button', class: 'danger' }, 'Remove');
    let shownSkipped = '';
    if (actions) {
      updateButton.addEventListener('click', () => void updateNow());
      removeButton.addEventListener('click', () => void remove());
      // A file is read once: a new upload replaces it.
      replace(actions, first.kind === 'file' ? null : updateButton, removeButton);
    }
    const el = h('li', { class: 'source' },
      h('p', { class: 'source-head' }, kind, ' ', status), name,
      h('p', { class: 'meta' }, numbers), updated, failure, skippedBox, actions);

    /** @param {Source} s */
    function update(s) {
      source = s;
      const label = nameOf(s);
      kind.textContent = SOURCE_KINDS[String(s.kind)] ?? String(s.kind);
      name.textContent = label;
      status.textContent = statusWords(s);
      status.className = `source-status badge ${s.status === 'done' ? 'ok' : s.status === 'failed' ? 'bad' : 'warn'}`;
      numbers.textContent = progressWords(s);
      updated.textContent = `${s.kind === 'file' ? 'Uploaded' : 'Last updated'}: ${at(s.last_synced_at)}${s.kind !== 'file' && s.schedule ? ` · ${scheduleWords(s.schedule)}` : ''}`;
      const why = typeof s.error === 'string' ? s.error : '';
      failure.textContent = why;
      failure.hidden = !why || s.status !== 'failed';
      const skipped = s.skipped ?? [];
      // Drawn again only when it changed, so an open list and the focus on it stay through the refreshes.
      const skippedKey = JSON.stringify(skipped);
      if (skippedKey !== shownSkipped) {
        shownSkipped = skippedKey;
        drawSkipped(skipped);
      }
      if (actions) {
        updateButton.setAttribute('aria-label', `Update now: ${label}`);
        removeButton.setAttribute('aria-label', `Remove ${label}`);
      }
    }

    /** @param {NonNullable<Source['skipped']>} skipped */
    function drawSkipped(skipped) {
      const open = skippedBox.querySelector('details')?.open ?? false;
      replace(skippedBox, skipped.length === 0 ? null : h('details', { class: 'skipped', open },
        h('summary', {}, `${count(skipped.length, 'page')} skipped, and why`),
        h('ul', { class: 'plain' }, skipped.map((p) => h('li', {},
          h('span', { class: 'url' }, String(p.url)), ': ', String(p.reason))))));
    }

    // Marked busy but not disabled: a disabled button loses the focus, and the owner who pressed it should stay there.
    async function updateNow() {
      if (updateButton.getAttribute('aria-busy') === 'true') return;
      listError.clear();
      updateButton.setAttribute('aria-busy', 'true');
      try {
        await api('POST', `/v1/knowledge/sources/${encodeURIComponent(String(source.id))}/sync`);
        if (isStopped()) return;
        announce.textContent = `${nameOf(source)} is read again.`;
        update({ ...source, status: 'queued' });
        watching.add(String(source.id));
      } catch (err) {
        listError.show(err);
      } finally {
        updateButton.removeAttribute('aria-busy');
      }
      await load();
    }

    async function remove() {
      listError.clear();
      const label = nameOf(source);
      const what = source.kind === 'file' ? 'this file' : 'this website';
      if (!confirm(`Remove ${label}? Customers no longer get answers from ${what}.`)) return;
      await busy(removeButton, async () => {
        try {
          await api('DELETE', `/v1/knowledge/sources/${encodeURIComponent(String(source.id))}`);
          if (isStopped()) return;
          announce.textContent = `Removed ${label}.`;
          heading.focus();
          await load();
        } catch (err) {
          if (err instanceof ApiError && err.status === 404) await load();
          else listError.show(err);
        }
      });
    }

    update(first);
    return { el, update, get source() { return source; } };
  }

  /** "Add your website": the address, start page or sitemap, how often. */
  function websiteForm() {
    const id = uid('site');
    const url = /** @type {HTMLInputElement} */ (h('input', { type: 'url', name: 'url', required: true, autocomplete: 'url', inputmode: 'url', spellcheck: 'false', placeholder: 'https://' }));
    const start = /** @type {HTMLInputElement} */ (h('input', { type: 'radio', name: `${id}-kind`, value: 'website', id: `${id}-website`, checked: true }));
    const sitemap = /** @type {HTMLInputElement} */ (h('input', { type: 'radio', name: `${id}-kind`, value: 'sitemap', id: `${id}-sitemap` }));
    const schedule = /** @type {HTMLSelectElement} */ (h('select', { name: 'schedule' }, SCHEDULES.map(([value, words]) => h('option', { value }, words))));
    const language = languageSelect('Tell from the pages');
    const formError = errorBox();
    const add = h('button', { type: 'submit' }, 'Add the website');
    const heading = h('h3', { id: `${id}-title` }, 'Add your website');
    // An address ending in .xml is a sitemap, until the owner chooses for themselves.
    let chosen = false;
    url.addEventListener('input', () => {
      if (chosen) return;
      const isXml = /\.xml(\.gz)?$/i.test(url.value.trim().replace(/[?#].*$/, ''));
      (isXml ? sitemap : start).checked = true;
    });
    for (const radio of [start, sitemap]) radio.addEventListener('change', () => { chosen = true; });
    const form = h('form', { class: 'card', 'aria-labelledby': heading.id, novalidate: true },
      heading,
      field('Web address', url, 'Your shop\'s home page (https://shop.example) or its sitemap (ending in .xml). Pages on other websites are not read.'),
      h('fieldset', { class: 'kinds' }, h('legend', {}, 'Read'),
        h('div', { class: 'row' },
          h('span', { class: 'choice' }, start, h('label', { for: start.id }, 'From this start page, following its links')),
          h('span', { class: 'choice' }, sitemap, h('label', { for: sitemap.id }, 'The pages this sitemap lists')))),
      field('Update it', schedule, 'Only pages that changed are read again; pages that are gone are removed.'),
      field('Language', language),
      formError.el, add);
    /** @type {Array<[(f: string) => boolean, HTMLInputElement | HTMLSelectElement]>} */
    const controls = [[(f) => f === 'url' || f === 'kind', url], [(f) => f === 'schedule', schedule], [(f) => f === 'language', language]];
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      formError.clear();
      clearFieldErrors(controls.map(([, c]) => c));
      announce.textContent = '';
      const address = url.value.trim();
      if (!address) {
        showFieldErrors({ details: [{ field: 'url', message: 'Type the address of your website first.' }] }, controls, formError);
        return;
      }
      const body = { kind: sitemap.checked ? 'sitemap' : 'website', url: /^[a-z][a-z0-9+.-]*:/i.test(address) ? address : `https://${address}`, schedule: schedule.value, ...(language.value ? { language: language.value } : {}) };
      void busy(add, async () => {
        try {
          /** @type {Api.PostKnowledgeSources | null} */
          const answer = await api('POST', '/v1/knowledge/sources', { body });
          if (isStopped()) return;
          const s = answer?.source ?? {};
          if (reading(s)) watching.add(String(s.id));
          form.reset();
          // reset() goes back to the default checked state, which h() does not set.
          start.checked = true;
          chosen = false;
          announce.textContent = `Added ${nameOf(s)}. Its pages are being read; this list shows the progress.`;
          await load();
        } catch (err) {
          showFieldErrors(err, controls, formError);
        }
      });
    });
    return form;
  }

  /** "Upload a file": one file at a time, sent as multipart form data. */
  function fileForm() {
    const id = uid('file');
    const file = /** @type {HTMLInputElement} */ (h('input', { type: 'file', name: 'file', required: true, accept: FILE_TYPES }));
    const language = languageSelect('Tell from the text');
    const formError = errorBox();
    const upload = h('button', { type: 'submit' }, 'Upload');
    const heading = h('h3', { id: `${id}-title` }, 'Upload a file');
    const form = h('form', { class: 'card', 'aria-labelledby': heading.id, novalidate: true },
      heading,
      field('File', file, 'PDF, Word (.docx), text, Markdown or HTML, up to 20 MB. A file with the same name replaces the one uploaded before.'),
      field('Language', language),
      formError.el, upload);
    /** @type {Array<[(f: string) => boolean, HTMLInputElement | HTMLSelectElement]>} */
    const controls = [[(f) => f === 'file', file], [(f) => f === 'language', language]];
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      formError.clear();
      clearFieldErrors(controls.map(([, c]) => c));
      announce.textContent = '';
      const chosen = file.files?.[0];
      if (!chosen) {
        showFieldErrors({ details: [{ field: 'file', message: 'Choose a file first.' }] }, controls, formError);
        return;
      }
      if (chosen.size > MAX_FILE_BYTES) {
        showFieldErrors({ details: [{ field: 'file', message: `The file ${chosen.name} is larger than 20 MB.` }] }, controls, formError);
        return;
      }
      const data = new FormData();
      data.append('file', chosen, chosen.name);
      if (language.value) data.append('language', language.value);
      void busy(upload, async () => {
        try {
          /** @type {Api.PostKnowledgeFiles | null} */
          const answer = await api('POST', '/v1/knowledge/files', { form: data });
          if (isStopped()) return;
          const s = answer?.source ?? {};
          if (reading(s)) watching.add(String(s.id));
          form.reset();
          // A note the upload answers with (its text cut at 2 MB) is said once here: it is not kept with the file.
          const notes = Array.isArray(s.skipped) ? s.skipped.map((n) => `Note: ${String(n?.reason ?? '')}.`).join(' ') : '';
          announce.textContent = (reading(s) ? `Uploaded ${nameOf(s)}. It is being read.` : `Uploaded ${nameOf(s)}. Customers get answers from it now.`) + (notes ? ` ${notes}` : '');
          await load();
        } catch (err) {
          if (err instanceof ApiError && Array.isArray(err.details) && err.details.length > 0) {
            showFieldErrors(err, controls, formError);
            return;
          }
          const message = err instanceof ApiError && err.status === 413 ? `The file ${chosen.name} is larger than 20 MB.`
            : err instanceof ApiError && err.status === 422 ? `The file ${chosen.name} could not be read: ${err.message}`
              : null;
          if (message) showFieldErrors({ details: [{ field: 'file', message }] }, controls, formError);
          else formError.show(err);
        }
      });
    });
    return form;
  }

  void load();
  return {
    el,
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** A source's name for people: a file's name, a website's address. @param {Source | undefined} s */
function nameOf(s) {
  return String((s?.kind === 'file' ? s?.name : s?.url ?? s?.name) ?? 'The source');
}

/** A file's size as people read it: "930 bytes", "12 KB", "3.4 MB". @param {number} bytes */
function sizeWords(bytes) {
  if (bytes < 1024) return count(bytes, 'byte');
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** @param {string} schedule */
function scheduleWords(schedule) {
  return ({ daily: 'updated every day', weekly: 'updated every week', manual: 'updated only when you ask' })[schedule] ?? '';
}

/** @param {string} unset the words for "no language chosen" */
function languageSelect(unset) {
  return /** @type {HTMLSelectElement} */ (h('select', { name: 'language' }, h('option', { value: '' }, unset), LANGUAGES.map(([code, name]) => h('option', { value: code }, name))));
}
