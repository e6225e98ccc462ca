// @ts-check
/**
 * Building the page: elements and text nodes only. Text from customers and integrators is never parsed as HTML, so
 * nothing here takes markup: children are nodes or strings (which become text nodes).
 */

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>} Attrs */

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
      box.textContent = plainWords(err instanceof Error ? err.message : String(err));
      box.hidden = false;
    },
    clear() {
      box.textContent = '';
      box.hidden = true;
    },
  };
}

/**
 * The API's messages are written for programs as well as people; the few that speak in schema terms are said in
 * words here (a pattern means nothing to a shop owner).
 * @param {string} message
 */
export function plainWords(message) {
  return message
    .replace(/must match pattern "[^"]*"/g, 'is not written in a form we can read')
    .replace(/must NOT have more than (\d+) characters/g, 'is too long: at most $1 characters')
    .replace(/must NOT have fewer than (\d+) characters/g, 'is too short: at least $1 characters')
    .replace(/must NOT have more than (\d+) items/g, 'has too many entries: at most $1');
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

/**
 * Field-level errors: each problem the API names (`details: [{field, message}]`) is shown under its control, which is
 * marked invalid; the first such control gets the focus. Problems of no known field go to `fallback`. Returns a clear
 * function for the next attempt.
 * @param {unknown} err the failed call's error
 * @param {Array<[(field: string) => boolean, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement]>} controls
 * @param {{ show(err: unknown): void }} fallback
 */
export function showFieldErrors(err, controls, fallback) {
  const details = err && typeof err === 'object' && 'details' in err ? err.details : undefined;
  const problems = Array.isArray(details) ? details.filter((d) => d && typeof d.field === 'string' && typeof d.message === 'string') : [];
  /** @type {HTMLElement[]} */
  const shown = [];
  let first = /** @type {HTMLElement | null} */ (null);
  const unplaced = [];
  for (const p of problems) {
    const match = controls.find(([matches]) => matches(p.field));
    if (!match) {
      unplaced.push(p);
      continue;
    }
    const control = match[1];
    const id = `${control.id || (control.id = uid('f'))}-error`;
    let note = document.getElementById(id);
    if (!note) {
      note = h('p', { class: 'field-error', id, role: 'alert' });
      control.insertAdjacentElement('afterend', note);
      shown.push(note);
    }
    // The API's field messages start with the verb ("must be a time …"): said here as a sentence about this field.
    const words = plainWords(p.message);
    const message = /^[a-z]/.test(words) ? `This ${words}${/[.!?]$/.test(words) ? '' : '.'}` : words;
    note.textContent = note.textContent ? `${note.textContent} ${message}` : message;
    control.setAttribute('aria-invalid', 'true');
    const described = (control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
    if (!described.includes(id)) control.setAttribute('aria-describedby', [...described, id].join(' '));
    first ??= control;
  }
  if (first) {
    first.focus();
    if (unplaced.length) fallback.show(new Error(unplaced.map((p) => p.message).join(' ')));
  } else {
    fallback.show(err);
  }
  return () => clearFieldErrors(controls.map(([, c]) => c));
}

/** Removes the marks of {@link showFieldErrors}. @param {Array<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>} controls */
export function clearFieldErrors(controls) {
  for (const control of controls) {
    const id = `${control.id}-error`;
    document.getElementById(id)?.remove();
    control.removeAttribute('aria-invalid');
    const rest = (control.getAttribute('aria-describedby') ?? '').split(' ').filter((d) => d && d !== id);
    if (rest.length) control.setAttribute('aria-describedby', rest.join(' '));
    else control.removeAttribute('aria-describedby');
  }
}

/**
 * A value to paste somewhere else (Twilio, Meta, a web page): read-only, with a copy button.
 * @param {string} label @param {string} value @param {string} [hint] @param {string} [testid]
 */
export function copyable(label, value, hint, testid) {
  const input = h('input', { type: 'text', readonly: true, value, class: 'secret', spellcheck: 'false', autocomplete: 'off', 'data-testid': testid ?? null });
  const status = h('span', { class: 'copied', role: 'status' });
  const copy = h('button', { type: 'button', class: 'quiet', 'aria-label': `Copy ${label}`, onclick: () => copyText(value, input, status) }, 'Copy');
  return h('div', { class: 'copyable' }, field(label, input, hint), h('div', { class: 'row' }, copy, status));
}
