// @ts-check
/**
 * Tests (./tests.js): one test, written and run (docs/scenarios.md). The form holds what an owner sets: the name, the
 * channel, the language, the customer's messages and, for each, what the bot's reply must show; how many times to run
 * it and which system answers. Everything else of the scenario (tool answers, patterns, the customer's details, and
 * what later versions add) is kept as it was and edited in "Edit as JSON"; the API checks both the same way, and its
 * problems are shown beside the fields they name. "Run" saves first when something changed, follows the run (an
 * aria-live line), then moves the focus to the result.
 */
/** @import * as Api from './api-types' */
/**
 * A scenario as the form edits it: the API's (POST /v1/scenarios), its turns as the form reads them.
 * @typedef {Omit<Api.PostScenariosBody, 'turns'> & { turns?: import('./tests-turns.js').TurnDraft[] }} Draft
 */
import { ApiError, api } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, loading, replace, showFieldErrors, uid } from './dom.js';
import { LANGUAGES } from './knowledge-editor.js';
import { followRun, runHistory, runResult } from './tests-run.js';
import { canonical, formMessage, turnRow } from './tests-turns.js';
import { CHANNELS } from './words.js';

/** Test limits (docs/scenarios.md, "Limits"): said in the hints, checked by the API. */
const MAX_TURNS = 30;
const MAX_RUNS = 20;

/** @typedef {import('./tests-turns.js').Controls} Controls */

/** After a delete, said on the list (./tests.js). */
export const notices = { deleted: '' };

/**
 * The editor: /dashboard/tests/new or /dashboard/tests/{id}.
 * @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx
 */
export function renderEditor(main, ctx) {
  /** @type {string | null} */
  let id = ctx.params[0] === 'new' ? null : (ctx.params[0] ?? null);
  /** The scenario as last saved (or as it starts): what the form does not show is kept from it. @type {Draft} */
  let saved = { name: '', channel: 'webchat', turns: [{ customer: '' }] };
  const abort = new AbortController();
  const heading = h('h1', { tabindex: '-1' }, id ? 'Test' : 'New test');
  const back = h('p', {}, h('a', { href: '/dashboard/tests', 'data-link': true }, 'All tests'));
  const body = h('div', { 'aria-busy': 'true' }, loading('Loading the test…'));
  const loadError = errorBox();
  replace(main, back, heading, loadError.el, body);

  // The form's controls.
  const name = h('input', { name: 'name', autocomplete: 'off', maxlength: 120 });
  const channel = h('select', { name: 'channel' }, Object.entries(CHANNELS).map(([value, label]) => h('option', { value }, label)));
  const language = h('select', { name: 'language' }, h('option', { value: '' }, 'Tell from the words'), LANGUAGES.map(([code, label]) => h('option', { value: code }, label)));
  const runs = h('input', { name: 'runs', type: 'number', min: 1, max: MAX_RUNS, step: 1, inputmode: 'numeric' });
  const integrator = h('select', { name: 'integrator' },
    h('option', { value: 'live' }, 'Your live system (as on the Integration screen)'),
    h('option', { value: 'none' }, 'None: the knowledge base and the AI only'),
    h('option', { value: 'url' }, 'Another address (a new version of your system)'));
  const address = h('input', { name: 'integrator-url', type: 'url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://staging.yourshop.example/botlink/channel' });
  const addressField = field('Address of that system', address, 'https only, and reachable from the internet. It is signed with your integration key.');
  const turnList = h('ol', { class: 'test-turns' });
  const addTurn = h('button', { type: 'button', class: 'quiet' }, 'Add a customer message');
  const formError = errorBox();
  const save = h('button', { type: 'submit' }, 'Save');
  const run = h('button', { type: 'button' }, 'Run');
  // This run's own number of plays (the API's `{runs}`); empty: the test's own "How many times".
  const plays = h('input', { name: 'plays', type: 'number', min: 1, max: MAX_RUNS, step: 1, inputmode: 'numeric' });
  const playsField = field('Times to play this run', plays, `Empty: as many times as the test says (How many times). 1 to ${MAX_RUNS}, for this run only.`);
  const saveStatus = h('p', { class: 'copied', role: 'status' });
  const form = h('form', { class: 'card test-form', 'aria-label': 'The test', novalidate: true },
    field('Name', name, 'Such as “Shipping question” or “Asks for a person”. Each test has its own name.'),
    h('div', { class: 'test-row' },
      field('Channel', channel, 'Where the customer writes or calls from.'),
      field('Language', language, 'The language the customer uses, when a message is too short to tell.')),
    h('h2', {}, 'What the customer says'),
    h('p', { class: 'hint' }, `One message per row (at most ${MAX_TURNS}), in order; under each, what the bot’s reply must show. Leave a box empty not to check it.`),
    turnList,
    addTurn,
    h('h2', {}, 'How it runs'),
    h('div', { class: 'test-row' },
      field('How many times', runs, `1 to ${MAX_RUNS}. An AI can answer differently each time: the result says how often it passed.`),
      field('Which system answers', integrator, 'Website chat never asks your system: this is for the phone and WhatsApp.')),
    addressField,
    formError.el,
    h('div', { class: 'row' }, save),
    saveStatus);

  // Running it: this run's plays, Run, and the test's earlier runs.
  const runBox = h('section', { class: 'card run-box', 'aria-label': 'Run the test' }, playsField, h('div', { class: 'row' }, run));

  // Edit as JSON: the whole test, for what the form does not show.
  const json = h('textarea', { name: 'json', rows: 16, class: 'secret', spellcheck: 'false' });
  const jsonError = errorBox();
  const saveJson = h('button', { type: 'button' }, 'Save the JSON');
  const jsonBox = h('details', { class: 'card json-editor' },
    h('summary', {}, 'Edit as JSON'),
    h('p', { class: 'hint' }, 'Everything the form does not show: answers for your tools (mocks), a pattern the reply must match (matches), a tool the AI must use (tool), the test customer’s number (customer). docs/scenarios.md describes each field.'),
    field('The test as JSON', json),
    jsonError.el,
    h('div', { class: 'row' }, saveJson));
  jsonBox.addEventListener('toggle', () => {
    if (jsonBox.open) json.value = JSON.stringify(definition(), null, 2);
  });

  // The run: a live line while it runs, then the result (focus moves to it).
  const runStatus = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
  const resultId = uid('result');
  const result = h('section', { class: 'card test-result', 'aria-labelledby': resultId, hidden: true });
  const runError = errorBox();

  // The test's runs that are kept (GET /v1/scenarios/{id}/runs), newest first, each opened on its own page.
  const historyId = uid('history');
  const pastRuns = h('section', { class: 'card test-history', 'aria-labelledby': historyId, hidden: true });
  /** Lists the test's runs again (after a run, and when the test opens). */
  async function showHistory() {
    if (!id) return;
    /** @type {Api.GetScenariosIdRuns} */
    const answer = await api('GET', `/v1/scenarios/${encodeURIComponent(id)}/runs`, { signal: abort.signal });
    if (abort.signal.aborted) return;
    replace(pastRuns, runHistory(answer.runs, id, historyId));
    pastRuns.hidden = false;
  }

  // Delete, asked once more in place.
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete this test');
  const removeBox = h('section', { class: 'delete-test', 'aria-label': 'Delete' }, h('div', { class: 'row' }, remove));
  const removeError = errorBox();

  /** @type {import('./tests-turns.js').TurnRow[]} */
  let rows = [];

  /** The form's rows again, numbered. */
  function renumber() {
    rows.forEach((r, i) => r.number(i, rows.length));
    addTurn.hidden = rows.length >= MAX_TURNS;
  }

  /** A new row for `turn`, which removes itself. @param {import('./tests-turns.js').TurnDraft} turn */
  function row(turn) {
    const made = turnRow(turn, () => {
      const at = rows.indexOf(made);
      rows.splice(at, 1);
      made.el.remove();
      renumber();
      // Focus stays in the list: on the message that took its place, else the one before.
      (rows[at] ?? rows[at - 1])?.customer.focus();
    });
    return made;
  }

  /** Fills the form from a scenario. @param {Draft} scenario */
  function fill(scenario) {
    saved = scenario;
    name.value = scenario.name ?? '';
    channel.value = scenario.channel ?? 'webchat';
    if (scenario.language && ![...language.options].some((o) => o.value === scenario.language)) language.append(h('option', { value: scenario.language }, scenario.language));
    language.value = scenario.language ?? '';
    runs.value = String(scenario.runs ?? 1);
    const i = scenario.integrator;
    integrator.value = typeof i === 'object' && i ? 'url' : i === 'none' ? 'none' : 'live';
    address.value = typeof i === 'object' && i ? String(i.url ?? '') : '';
    addressField.hidden = integrator.value !== 'url';
    rows = (Array.isArray(scenario.turns) && scenario.turns.length ? scenario.turns : [{ customer: '' }]).map(row);
    replace(turnList, rows.map((r) => r.el));
    renumber();
  }

  /** The scenario as the form says it, with what it does not show kept from the saved one. */
  function definition() {
    const d = structuredClone(saved);
    d.name = name.value.trim();
    d.channel = /** @type {Draft['channel']} */ (channel.value);
    if (language.value) d.language = language.value;
    else delete d.language;
    // A default the saved test leaves out stays out, so that an unchanged form is unchanged.
    const times = Number(runs.value);
    if (runs.value !== '' && Number.isFinite(times) && !(times === 1 && saved.runs === undefined)) d.runs = times;
    else if (runs.value === '' || saved.runs === undefined) delete d.runs;
    if (integrator.value === 'url') d.integrator = { url: address.value.trim() };
    else if (integrator.value === 'none') d.integrator = 'none';
    else if (saved.integrator !== 'live') delete d.integrator;
    else d.integrator = 'live';
    d.turns = rows.map((r) => r.toTurn());
    return d;
  }

  /** Every control, with the fields of the API's problems each one answers for; the rest go to the JSON. @returns {Controls} */
  function controls() {
    /** @type {Controls} */
    const list = [
      [(f) => f === 'name', name],
      [(f) => f === 'channel', channel],
      [(f) => f === 'language', language],
      [(f) => f === 'runs', runs],
      [(f) => f === 'endpoint_url' || f.startsWith('integrator'), integrator.value === 'url' ? address : integrator],
      [(f) => f === 'turns', rows[0]?.customer ?? name],
    ];
    rows.forEach((r, i) => list.push(...r.controls(i)));
    return list;
  }

  /** Saves `body` (POST for a new test, PUT after); true when saved. Problems are shown where they belong. @param {unknown} body the scenario, as JSON @param {'form' | 'json'} from */
  async function store(body, from) {
    const all = controls();
    clearFieldErrors([...all.map(([, c]) => c), json]);
    formError.clear();
    jsonError.clear();
    try {
      /** @type {Api.PutScenariosId | Api.PostScenarios} */
      const answer = id ? await api('PUT', `/v1/scenarios/${encodeURIComponent(id)}`, { body }) : await api('POST', '/v1/scenarios', { body });
      const first = !id;
      id = answer.scenario.id;
      fill(answer.scenario.definition);
      heading.textContent = answer.scenario.name;
      if (jsonBox.open) json.value = JSON.stringify(saved, null, 2);
      if (first) {
        // The new test's own address, without drawing the screen again (a run may be starting).
        history.replaceState(null, '', `/dashboard/tests/${encodeURIComponent(String(id))}`);
        removeBox.hidden = false;
      }
      saveStatus.textContent = `Saved “${answer.scenario.name}”.`;
      return true;
    } catch (err) {
      saveStatus.textContent = '';
      showProblems(err, from, all);
      return false;
    }
  }

  /** The API's problems beside their fields; those of fields the form does not show beside the JSON. @param {unknown} err @param {'form' | 'json'} from @param {Controls} all */
  function showProblems(err, from, all) {
    const e = err instanceof ApiError ? err : null;
    const details = Array.isArray(e?.details) ? /** @type {{ field: string, message: string }[]} */ (e.details) : [];
    const named = details.filter((d) => d && typeof d.field === 'string' && typeof d.message === 'string');
    if (!e || named.length === 0) {
      (from === 'json' ? jsonError : formError).show(err);
      return;
    }
    const onForm = from === 'form' ? named.filter((d) => all.some(([m]) => m(d.field))) : [];
    const onJson = named.filter((d) => !onForm.includes(d));
    if (onJson.length) {
      if (!jsonBox.open) {
        jsonBox.open = true;
        json.value = JSON.stringify(definition(), null, 2);
      }
      // A whole sentence from the API when it has one problem (a judge that needs a model); else each field by name.
      const words = onJson.length === 1 && e.status === 422 ? e.message : onJson.map((d) => `${d.field || 'the test'} ${d.message}`).join('; ');
      showFieldErrors({ details: [{ field: 'json', message: `In the JSON, ${words}` }] }, [[() => true, json]], jsonError);
    }
    // Last, so that the focus goes to the first field of the form that is wrong.
    if (onForm.length) showFieldErrors({ details: onForm.map((d) => ({ field: d.field, message: formMessage(d) })) }, all, formError);
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(save, async () => {
      await saveForm();
    });
  });

  /** Saves what the form says, after its own checks. */
  async function saveForm() {
    const problems = rows.flatMap((r, i) => r.problems(i));
    if (problems.length) {
      clearFieldErrors(controls().map(([, c]) => c));
      showFieldErrors({ details: problems }, controls(), formError);
      return false;
    }
    return store(definition(), 'form');
  }

  saveJson.addEventListener('click', () => void busy(saveJson, async () => {
    clearFieldErrors([json]);
    jsonError.clear();
    let body;
    try {
      body = JSON.parse(json.value);
    } catch (err) {
      showFieldErrors({ details: [{ field: 'json', message: `This is not JSON: ${err instanceof Error ? err.message : String(err)}` }] }, [[() => true, json]], jsonError);
      return;
    }
    if (await store(body, 'json')) saveStatus.textContent = `Saved “${saved.name}” from the JSON.`;
  }));

  integrator.addEventListener('change', () => {
    addressField.hidden = integrator.value !== 'url';
    if (!addressField.hidden) address.focus();
  });
  addTurn.addEventListener('click', () => {
    const added = row({ customer: '' });
    rows.push(added);
    turnList.append(added.el);
    renumber();
    added.customer.focus();
  });

  /** Whether the form says something other than what is saved. */
  const changed = () => !id || canonical(definition()) !== canonical(saved);

  run.addEventListener('click', () => void busy(run, async () => {
    runError.clear();
    clearFieldErrors([plays]);
    const times = plays.value === '' ? undefined : Number(plays.value);
    if (times !== undefined && !(Number.isInteger(times) && times >= 1 && times <= MAX_RUNS)) {
      showFieldErrors({ details: [{ field: 'plays', message: `Give a whole number from 1 to ${MAX_RUNS}, or leave it empty.` }] }, [[(f) => f === 'plays', plays]], runError);
      return;
    }
    if (changed() && !(await saveForm())) return;
    try {
      /** @type {Api.PostScenariosIdRuns} */
      const started = await api('POST', `/v1/scenarios/${encodeURIComponent(String(id))}/runs`, { body: times === undefined ? {} : { runs: times } });
      await follow(started.run.id, true);
    } catch (err) {
      runStatus.textContent = '';
      if (err instanceof ApiError && err.status === 429) runError.show(new Error(`${err.message} Up to 20 runs of your tests wait or play at once; try again in a few seconds.`));
      else if (err instanceof ApiError && Array.isArray(err.details) && err.details.some((/** @type {unknown} */ d) => d && typeof d === 'object' && 'field' in d && d.field === 'runs')) {
        showFieldErrors({ details: [{ field: 'plays', message: `Give a whole number from 1 to ${MAX_RUNS}, or leave it empty.` }] }, [[(f) => f === 'plays', plays]], runError);
      } else runError.show(err);
    }
  }));

  /** Follows a run until done and shows its result; `moveFocus` when the user started it here. @param {string} runId @param {boolean} moveFocus */
  async function follow(runId, moveFocus) {
    if (moveFocus) runStatus.textContent = 'Starting the run…';
    let running = moveFocus;
    run.disabled = true;
    try {
      const done = await followRun(runId, (words) => {
        running = true;
        runStatus.textContent = words;
      }, abort.signal);
      if (!done) return;
      // Said when it ends while watched; an old result is just shown.
      runStatus.textContent = running ? `The run finished: ${done.passed} of ${done.runs} passed.` : '';
      replace(result, runResult(done, String(id), resultId));
      result.hidden = false;
      if (moveFocus) document.getElementById(resultId)?.focus();
      await showHistory().catch((/** @type {unknown} */ err) => {
        if (!abort.signal.aborted) runError.show(err);
      });
    } finally {
      run.disabled = false;
    }
  }

  remove.addEventListener('click', () => {
    const sure = h('button', { type: 'button', class: 'danger' }, `Delete “${saved.name}” and its runs`);
    const keep = h('button', { type: 'button', class: 'quiet' }, 'Keep it');
    const restore = () => {
      replace(removeBox, h('div', { class: 'row' }, remove), removeError.el);
      remove.focus();
    };
    keep.addEventListener('click', restore);
    sure.addEventListener('click', () => void busy(sure, async () => {
      try {
        await api('DELETE', `/v1/scenarios/${encodeURIComponent(String(id))}`);
        notices.deleted = `Deleted the test “${saved.name}”.`;
        ctx.navigate('/dashboard/tests');
      } catch (err) {
        removeError.show(err);
      }
    }));
    replace(removeBox, h('p', {}, 'The test and the conversations of its runs are deleted for good.'), h('div', { class: 'row' }, sure, keep), removeError.el);
    keep.focus();
  });

  function show() {
    body.setAttribute('aria-busy', 'false');
    removeBox.hidden = !id;
    replace(body, form, jsonBox, runBox, runStatus, runError.el, result, pastRuns, removeBox);
  }

  if (!id) {
    fill(saved);
    show();
  } else {
    const scenarioId = id;
    void (async () => {
      try {
        /** @type {Api.GetScenariosId} */
        const answer = await api('GET', `/v1/scenarios/${encodeURIComponent(scenarioId)}`, { signal: abort.signal });
        if (abort.signal.aborted) return;
        fill(answer.scenario.definition);
        heading.textContent = answer.scenario.name;
        show();
        // The last run, when there is one: its result, or followed while it still runs.
        /** @type {Api.GetScenarios} */
        const list = await api('GET', '/v1/scenarios', { signal: abort.signal });
        const last = list.scenarios.find((s) => s.id === scenarioId)?.last_run;
        if (last && !abort.signal.aborted) await follow(last.id, false);
        else await showHistory();
      } catch (err) {
        if (abort.signal.aborted) return;
        body.setAttribute('aria-busy', 'false');
        if (body.contains(form)) runError.show(err);
        else {
          replace(body);
          loadError.show(err instanceof ApiError && err.status === 404 ? new Error('This test does not exist (any more).') : err);
        }
      }
    })();
  }
  return () => abort.abort();
}
