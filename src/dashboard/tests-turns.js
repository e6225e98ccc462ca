// @ts-check
/**
 * Tests (./tests-editor.js): one customer message of a test on the form, with what the bot's reply must show, in an
 * owner's words (docs/scenarios.md, "Expectations"). The expectations the form does not show (a pattern, a tool) are
 * kept as they were, and named, so that a change on the form never loses what was written as JSON.
 */
import { field, h } from './dom.js';
import { ANSWERED_BY } from './tests-run.js';

/** The latency ceiling's limit, in seconds (docs/scenarios.md, "Limits": 2 minutes). */
export const MAX_SECONDS = 120;

/** The expectations the form edits; every other of a turn's `expect` is kept as it is. */
const FORM_EXPECT = ['contains', 'not_contains', 'source', 'handoff', 'max_ms'];

/** @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} Control */
/** @typedef {Array<[(field: string) => boolean, Control]>} Controls */
/**
 * A customer message as the form edits it: the scenario's turn (POST /v1/scenarios), its `expect` read as what was
 * written (JSON the owner may have typed), not yet checked by the API.
 * @typedef {{ customer: string, expect?: Record<string, unknown> }} TurnDraft
 */

/**
 * A row for one customer message (a scenario's turn). `onRemove` is called when its Remove button is pressed.
 * @param {TurnDraft | undefined} turn @param {() => void} onRemove
 */
export function turnRow(turn, onRemove) {
  const e = turn?.expect ?? {};
  const customer = h('textarea', { rows: 2, name: 'customer' });
  customer.value = typeof turn?.customer === 'string' ? turn.customer : '';
  const contains = h('textarea', { rows: 2, name: 'contains' });
  contains.value = Array.isArray(e.contains) ? e.contains.join('\n') : '';
  const notContains = h('textarea', { rows: 2, name: 'not_contains' });
  notContains.value = Array.isArray(e.not_contains) ? e.not_contains.join('\n') : '';
  const source = h('select', { name: 'source' }, h('option', { value: '' }, 'Don’t check'),
    Object.entries(ANSWERED_BY).map(([value, label]) => h('option', { value }, label[0]?.toUpperCase() + label.slice(1))));
  source.value = typeof e.source === 'string' ? e.source : '';
  const handoff = h('select', { name: 'handoff' },
    h('option', { value: '' }, 'Don’t check'),
    h('option', { value: 'false' }, 'No: the bot keeps answering'),
    h('option', { value: 'human' }, 'Yes, to a person'),
    h('option', { value: 'forward' }, 'Yes, the question is forwarded to the team'),
    h('option', { value: 'true' }, 'Yes, either way'));
  handoff.value = e.handoff === undefined ? '' : String(e.handoff);
  const within = h('input', { type: 'number', name: 'within', min: 0.1, max: MAX_SECONDS, step: 0.1, inputmode: 'decimal' });
  within.value = typeof e.max_ms === 'number' ? String(e.max_ms / 1000) : '';
  /** @type {Record<string, unknown>} */
  const rest = Object.fromEntries(Object.entries(e).filter(([k]) => !FORM_EXPECT.includes(k)));
  const legend = h('legend', {});
  const remove = h('button', { type: 'button', class: 'quiet remove-turn', onclick: onRemove }, 'Remove');
  const el = h('li', {}, h('fieldset', { class: 'test-turn' }, legend,
    field('The customer writes', customer),
    h('div', { class: 'expectations' },
      field('The reply mentions', contains, 'One per line; capitals do not matter.'),
      field('The reply must not mention', notContains, 'One per line.'),
      field('Answered by', source),
      field('Hands over to a person', handoff),
      field('Answers within (seconds)', within, `Up to ${MAX_SECONDS}.`)),
    Object.keys(rest).length ? h('p', { class: 'hint' }, `Also checked (in Edit as JSON): ${Object.keys(rest).join(', ')}.`) : null,
    h('div', { class: 'row' }, remove)));

  /** @param {HTMLTextAreaElement} t */
  const lines = (t) => t.value.split('\n').map((l) => l.trim()).filter(Boolean);
  return {
    el,
    customer,
    /** Numbers the row `i` (0-based) of `total`: its legend and its Remove button (hidden for the only one). @param {number} i @param {number} total */
    number(i, total) {
      legend.textContent = `Customer message ${i + 1}`;
      remove.setAttribute('aria-label', `Remove customer message ${i + 1}`);
      remove.hidden = total === 1;
    },
    /** The turn as the form says it, with the expectations it does not show kept. */
    toTurn() {
      /** @type {Record<string, unknown>} */
      const expect = { ...rest };
      if (lines(contains).length) expect.contains = lines(contains);
      if (lines(notContains).length) expect.not_contains = lines(notContains);
      if (source.value) expect.source = source.value;
      if (handoff.value) expect.handoff = handoff.value === 'true' ? true : handoff.value === 'false' ? false : handoff.value;
      if (within.value !== '') expect.max_ms = Math.round(Number(within.value) * 1000);
      return Object.keys(expect).length ? { customer: customer.value, expect } : { customer: customer.value };
    },
    /** Its controls, with the fields of the API's problems each one answers for, as the row `i`. @param {number} i @returns {Controls} */
    controls(i) {
      const at = (/** @type {string} */ f, /** @type {string} */ key) => f === `turns.${i}.${key}` || f.startsWith(`turns.${i}.${key}.`);
      return [
        [(f) => at(f, 'customer'), customer],
        [(f) => at(f, 'expect.contains'), contains],
        [(f) => at(f, 'expect.not_contains'), notContains],
        [(f) => at(f, 'expect.source'), source],
        [(f) => at(f, 'expect.handoff'), handoff],
        [(f) => at(f, 'expect.max_ms'), within],
      ];
    },
    /** What the form can check itself: a time in seconds (the API would name it in milliseconds). @param {number} i */
    problems(i) {
      const s = Number(within.value);
      return within.value !== '' && !(s >= 0.001 && s <= MAX_SECONDS) ? [{ field: `turns.${i}.expect.max_ms`, message: `Give a number of seconds from 0.1 to ${MAX_SECONDS}.` }] : [];
    },
  };
}

/** @typedef {ReturnType<typeof turnRow>} TurnRow */

/** A problem of a form field, as a sentence an owner reads under it. @param {{ field: string, message: string }} d */
export function formMessage(d) {
  if (d.message === 'taken') return 'Another test already has this name.';
  if (d.message === 'must NOT have fewer than 1 characters') return 'is required';
  if (d.message === 'not a valid regular expression') return 'is not a pattern that can be read.';
  return d.message;
}

/** JSON with the keys of every object in order: two scenarios that say the same compare equal. @param {unknown} value @returns {string} */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(/** @type {Record<string, unknown>} */ (value)[k])}`).join(',')}}`;
  return JSON.stringify(value);
}
