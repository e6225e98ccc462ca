// @ts-check
/**
 * Tests: the workspace's test conversations (docs/scenarios.md), for owners and admins (the API refuses agents, and
 * so does the navigation). The list with each test's last result, "Run all tests", "New test", one test written and
 * run (./tests-editor.js), and a run's conversations (./tests-run.js). Addresses: /dashboard/tests, /tests/new,
 * /tests/{id}, /tests/{id}/runs/{runId}.
 */
/** @import * as Api from './api-types' */
import { ApiError, api } from './api.js';
import { busy, errorBox, h, loading, replace, uid } from './dom.js';
import { when } from './time.js';
import { notices, renderEditor } from './tests-editor.js';
import { renderRun } from './tests-run.js';
import { CHANNELS } from './words.js';

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderTests(main, ctx) {
  if (ctx.params[1] === 'runs' && ctx.params[2]) return renderRun(main, ctx);
  if (ctx.params[0]) return renderEditor(main, ctx);
  return renderList(main);
}

/** How often "Run all" reads the runs it follows, and how long it waits when the workspace's runs are at their cap. */
const POLL_MS = 1_000;
/** The API's cap on a workspace's runs waiting or playing at once (docs/scenarios.md, "Limits"): said in words. */
const MAX_OPEN_RUNS = 20;

/** @param {HTMLElement} main */
function renderList(main) {
  const list = h('div', { 'aria-busy': 'true' }, loading('Loading the tests…'));
  const error = errorBox();
  const status = h('p', { class: 'ok-note', role: 'status', hidden: !notices.deleted }, notices.deleted);
  notices.deleted = '';
  const runAll = h('button', { type: 'button', hidden: true }, 'Run all tests');
  const progress = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
  const summaryId = uid('summary');
  const summary = h('section', { class: 'card test-result', 'aria-labelledby': summaryId, hidden: true });
  const runError = errorBox();
  replace(main,
    h('h1', { tabindex: '-1' }, 'Tests'),
    h('p', {}, 'Try the bot before your customers do. A test is what a customer says and what the bot’s replies must show. ' +
      'Running it sends the messages through the bot as a customer’s would, with your system, the knowledge base and the AI, ' +
      'but no customer, colleague, report or webhook ever sees these conversations.'),
    status,
    h('div', { class: 'row' }, h('a', { href: '/dashboard/tests/new', 'data-link': true, class: 'button' }, 'New test'), runAll),
    progress,
    runError.el,
    summary,
    error.el,
    list);
  const abort = new AbortController();
  /** @type {Api.GetScenarios['scenarios']} */
  let tests = [];

  async function load() {
    /** @type {Api.GetScenarios} */
    const answer = await api('GET', '/v1/scenarios', { signal: abort.signal });
    if (abort.signal.aborted) return;
    list.setAttribute('aria-busy', 'false');
    tests = answer.scenarios;
    runAll.hidden = tests.length === 0;
    replace(list, tests.length === 0
      ? h('p', { class: 'empty' }, 'No tests yet. Start with a question customers often ask, and what the answer must say.')
      : h('ul', { class: 'tests' }, tests.map(row)));
  }

  runAll.addEventListener('click', () => void busy(runAll, async () => {
    runError.clear();
    summary.hidden = true;
    try {
      const done = await runEvery(tests.map((t) => ({ id: t.id, name: t.name })), (words) => {
        progress.textContent = words;
      }, abort.signal);
      if (!done) return;
      const plays = done.reduce((n, r) => n + r.runs, 0);
      const passedPlays = done.reduce((n, r) => n + r.passed, 0);
      const passedTests = done.filter((r) => r.passed === r.runs).length;
      const rate = plays === 0 ? 0 : Math.round((passedPlays / plays) * 100);
      progress.textContent = `All tests ran: ${passedTests} of ${done.length} passed.`;
      const failed = done.filter((r) => r.passed !== r.runs);
      replace(summary,
        h('h2', { id: summaryId, tabindex: '-1' }, 'Result of running all tests'),
        h('p', { class: `outcome ${failed.length === 0 ? 'ok' : 'bad'}` }, h('strong', {}, `Passed ${passedTests} of ${done.length} ${done.length === 1 ? 'test' : 'tests'}`),
          `. Pass rate of all plays: ${rate} % (${passedPlays} of ${plays}).`),
        failed.length
          ? [h('p', {}, 'Not as expected:'), h('ul', { class: 'plain' }, failed.map((r) =>
            h('li', {}, h('a', { href: `/dashboard/tests/${encodeURIComponent(r.scenarioId)}/runs/${encodeURIComponent(r.id)}`, 'data-link': true }, r.name), ` (passed ${r.passed} of ${r.runs})`)))]
          : h('p', {}, 'Every expectation of every test held.'));
      summary.hidden = false;
      document.getElementById(summaryId)?.focus();
      await load();
    } catch (err) {
      if (abort.signal.aborted) return;
      progress.textContent = '';
      runError.show(err);
    }
  }));

  void (async () => {
    try {
      await load();
    } catch (err) {
      if (abort.signal.aborted) return;
      list.setAttribute('aria-busy', 'false');
      replace(list);
      error.show(err instanceof ApiError && err.status === 403 ? new Error('Tests are for owners and admins. Ask one of them to add or run a test.') : err);
    }
  })();
  return () => abort.abort();
}

/** A pause that ends early when the user leaves. @param {number} ms @param {AbortSignal} signal */
function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(undefined);
    }, { once: true });
  });
}

/**
 * Runs every test once (POST /v1/scenarios/{id}/runs each, with the test's own number of plays) and follows the runs
 * until all are done, saying how far it is. The workspace may have MAX_OPEN_RUNS runs waiting or playing at once: a
 * test the API refuses for that (429) is asked again once some have finished, and the progress says so. Resolves with
 * each test's finished run, or null when the user left.
 * @param {{ id: string, name: string }[]} tests @param {(words: string) => void} say @param {AbortSignal} signal
 * @returns {Promise<{ id: string, scenarioId: string, name: string, runs: number, passed: number }[] | null>}
 */
async function runEvery(tests, say, signal) {
  const waiting = [...tests];
  /** @type {Map<string, { scenarioId: string, name: string }>} run id → its test */
  const open = new Map();
  /** @type {{ id: string, scenarioId: string, name: string, runs: number, passed: number }[]} */
  const done = [];
  say(`Starting ${tests.length} ${tests.length === 1 ? 'test' : 'tests'}…`);
  while (waiting.length || open.size) {
    // Start what the workspace's cap lets start.
    let capped = false;
    while (waiting.length) {
      const next = /** @type {{ id: string, name: string }} */ (waiting[0]);
      try {
        /** @type {Api.PostScenariosIdRuns} */
        const started = await api('POST', `/v1/scenarios/${encodeURIComponent(next.id)}/runs`, { body: {}, signal });
        open.set(started.run.id, { scenarioId: next.id, name: next.name });
        waiting.shift();
      } catch (err) {
        if (signal.aborted) return null;
        if (err instanceof ApiError && err.status === 429) {
          capped = true;
          break;
        }
        // A test deleted meanwhile is left out; anything else stops the run of all.
        if (err instanceof ApiError && err.status === 404) {
          waiting.shift();
          continue;
        }
        throw err;
      }
    }
    if (signal.aborted) return null;
    say(`Running all ${tests.length} tests: ${done.length} done, ${open.size} running or waiting` +
      (waiting.length ? `, ${waiting.length} not started yet` : '') + '.' +
      (capped ? ` Your workspace runs at most ${MAX_OPEN_RUNS} tests at a time; the others start as those finish.` : ''));
    await pause(POLL_MS, signal);
    if (signal.aborted) return null;
    for (const [runId, test] of [...open]) {
      /** @type {Api.GetScenarioRunsId} */
      const run = await api('GET', `/v1/scenario-runs/${encodeURIComponent(runId)}`, { signal });
      if (signal.aborted) return null;
      if (run.status === 'done') {
        open.delete(runId);
        done.push({ id: runId, scenarioId: test.scenarioId, name: test.name, runs: run.runs, passed: run.passed });
      }
    }
  }
  // In the list's order (by name), not the order they finished.
  return tests.flatMap((t) => done.filter((d) => d.scenarioId === t.id));
}

/** One test: its name, channel, and how its last run went. @param {Api.GetScenarios['scenarios'][number]} s */
function row(s) {
  const last = s.last_run;
  const turns = Array.isArray(s.definition?.turns) ? s.definition.turns.length : 0;
  let outcome;
  if (!last) outcome = h('span', { class: 'badge' }, 'Not run yet');
  else if (last.status !== 'done') outcome = h('span', { class: 'badge warn' }, 'Running…');
  else {
    const all = last.passed === last.runs;
    outcome = [
      h('span', { class: `badge ${all ? 'ok' : 'bad'}` }, `Passed ${last.passed} of ${last.runs}`),
      h('span', { class: 'meta' }, `${Math.round((last.pass_rate ?? 0) * 100)} % · ${when(last.finished_at)}`),
    ];
  }
  return h('li', { class: 'test' },
    h('a', { href: `/dashboard/tests/${encodeURIComponent(s.id)}`, 'data-link': true, class: 'test-name' }, s.name),
    h('span', { class: 'meta' }, `${CHANNELS[s.definition?.channel] ?? s.definition?.channel} · ${turns} ${turns === 1 ? 'message' : 'messages'}`),
    h('span', { class: 'test-outcome' }, h('span', { class: 'sr-only' }, 'Last run: '), outcome));
}
