// @ts-check
/**
 * Building the page: elements and text nodes only. Text from customers and integrators is never parsed as HTML, so
 * nothing here takes markup: children are nodes or strings (which become text nodes).
 */

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | null | undefined | ((event: any) => void)>} Attrs */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs] attributes; `on<event>` adds a listener, `class` sets the class, false/null leaves it out
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = String(value);
    else if (name === 'value' && 'value' in el) /** @type {HTMLInputElement} */ (el).value = String(value);
    else if (name === 'checked' && 'checked' in el) /** @type {HTMLInputElement} */ (el).checked = Boolean(value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

/** @param {Element} el @param {(Child | Child[])[]} children */
function append(el, children) {
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    el.append(typeof child === 'number' ? String(child) : child);
  }
}

/** Replaces everything inside `el`. @param {Element} el @param {...(Child | Child[])} children */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

let ids = 0;
/** A fresh id for label/for and aria-describedby pairs. @param {string} prefix */
export function uid(prefix) {
  ids += 1;
  return `${prefix}-${ids}`;
}

/**
 * A labelled form field. @param {string} label
 * @param {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} control
 * @param {string} [hint]
 */
export function field(label, control, hint) {
  if (!control.id) control.id = uid('f');
  const hintEl = hint ? h('p', { class: 'hint', id: uid('hint') }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

/** The place an error is shown: role=alert so a screen reader says it. */
export function errorBox() {
  const box = h('p', { class: 'error', role: 'alert', hidden: true });
  return {
    el: box,
    /** @param {unknown} err */
    show(err) {
      box.textContent = err instanceof Error ? err.message : String(err);
      box.hidden = false;
    },
    clear() {
      box.textContent = '';
      box.hidden = true;
    },
  };
}

/** A loading line for a region that is being fetched. @param {string} [what] */
export function loading(what = 'Loading…') {
  return h('p', { class: 'loading', role: 'status' }, what);
}

/** Runs `work` with the button disabled and marked busy. @param {HTMLButtonElement} button @param {() => Promise<void>} work */
export async function busy(button, work) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/** Local date and time of an ISO string. @param {string | null | undefined} iso */
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * A secret shown once: the value in a read-only field, a copy button and the warning.
 * @param {string} label @param {string} value @param {string} warning
 */
export function shownOnce(label, value, warning) {
  const input = h('input', { type: 'text', readonly: true, value, class: 'secret', spellcheck: 'false', autocomplete: 'off' });
  const status = h('span', { class: 'copied', role: 'status' });
  const copy = h('button', { type: 'button', onclick: () => copyText(value, input, status) }, 'Copy');
  return h('div', { class: 'once', 'data-testid': 'shown-once' },
    h('p', { class: 'warning' }, h('strong', {}, 'Shown once. '), warning),
    field(label, input),
    h('div', { class: 'row' }, copy, status));
}

/** @param {string} text @param {HTMLInputElement | HTMLTextAreaElement} source @param {HTMLElement} status */
export async function copyText(text, source, status) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = 'Copied.';
  } catch {
    source.select();
    status.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
  }
}
