// @ts-check
/**
 * Tests (./tests.js): a run of a test, in the owner's words. Following a run until it is done (GET /v1/scenario-runs/{id},
 * read every second: the API has no stream for runs), its result (passed N of M, and each failure: which message,
 * what was expected, what came back) and the conversations it played (docs/scenarios.md, "Test conversations").
 * The API writes expectations as the scenario file does (`contains "…"`, `source ai`, `max_ms 800`); they are said in
 * words here, and anything not known yet is shown as the API wrote it. Every text from a run (the customer's and the
 * bot's lines) is a text node.
 */
/** @import * as Api from './api-types' */
/** @typedef {Api.GetScenarioRunsId} Run */
/**
 * A play's transcript as the run keeps it (src/scenarios/scenario-runner.ts, Transcript): the API describes it in words
 * only, and an old run's may lack what a newer engine adds, so every field is read as maybe missing.
 * @typedef {{ run?: number, session_id?: string | null, turns?: PlayTurn[], judge?: unknown }} Transcript
 * @typedef {{ customer?: string, reply?: string | null, source?: string | null, handoff?: { kind?: string, connected?: boolean } | null, tools?: { name?: string, args?: unknown, ok?: boolean }[], ms?: number, passed?: boolean }} PlayTurn
 */
import { ApiError, api } from './api.js';
import { errorBox, h, loading, replace } from './dom.js';
import { when } from './time.js';
import { CHANNELS } from './words.js';

/** How often a running run is read again. */
const POLL_MS = 1_000;

/** Who answered, as the Tests screen says it (docs/scenarios.md, "Expectations": `source`). @type {Record<string, string>} */
export const ANSWERED_BY = { integrator: 'your system', knowledge_base: 'the knowledge base', ai: 'the AI', fallback: 'nobody (the standard “I don’t know” sentence)' };

/** A handoff expectation, in words. @type {Record<string, string>} */
export const HANDOFF_WORDS = { true: 'hands over (to a person or the team)', false: 'does not hand over', human: 'hands over to a person', forward: 'forwards the question to the team' };

/** A time: "350 ms" under a second, else "1.2 s". @param {number} ms */
export function seconds(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1).replace(/\.0$/, '')} s`;
}

/** A JSON string from the API's expectation text, or the text as it is. @param {string} text */
function unquote(text) {
  try {
    const v = JSON.parse(text);
    return typeof v === 'string' ? v : text;
  } catch {
    return text;
  }
}

/** What was expected, in words. @param {string} expectation as the API writes it */
export function expectedWords(expectation) {
  const [, key = '', rest = ''] = /^(\S+)\s?([\s\S]*)$/.exec(expectation) ?? [];
  switch (key) {
    case 'contains': return `the reply mentions “${unquote(rest)}”`;
    case 'not_contains': return `the reply does not mention “${unquote(rest)}”`;
    case 'matches': return `the reply matches the pattern ${rest}`;
    case 'source': return `answered by ${ANSWERED_BY[rest] ?? rest}`;
    case 'handoff': return `the bot ${HANDOFF_WORDS[rest] ?? rest}`;
    case 'tool': {
      const [name = '', args = ''] = [rest.split(' ', 1)[0], rest.slice(rest.indexOf(' ') + 1)];
      return args && args !== rest ? `the AI uses the tool ${name} with ${args}` : `the AI uses the tool ${name}`;
    }
    case 'max_ms': return `an answer within ${seconds(Number(rest))}`;
    case 'integrator': return `your system at ${rest} can be asked`;
    case 'judge:': return `the AI judge finds: “${rest}”`;
    case 'judge': return 'a verdict from the AI judge';
    default:
      if (expectation === 'a reply') return 'a reply';
      if (expectation === 'the run finishes') return 'the run finishes';
      return expectation;
  }
}

/** What came back, in words. @param {string} expectation @param {string} got */
export function gotWords(expectation, got) {
  if (got.startsWith('"')) return `the reply “${unquote(got)}”`;
  if (expectation.startsWith('source ')) return got === 'no reply' ? 'no reply' : `answered by ${ANSWERED_BY[got] ?? got}`;
  if (expectation.startsWith('handoff ')) {
    if (got === 'no handoff') return 'no handover';
    const [kind, connected] = [got.replace(/ \(connected\)$/, ''), got.endsWith('(connected)')];
    return `${kind === 'forward' ? 'forwarded to the team' : kind === 'human' ? 'handed over to a person' : got}${connected ? ' (put through)' : ''}`;
  }
  const ms = /^(\d+) ms$/.exec(got);
  if (ms) return `an answer after ${seconds(Number(ms[1]))}`;
  if (expectation.startsWith('judge: ')) return `not met: ${got}`;
  if (expectation === 'judge') return judgeErrorWords(got);
  return got;
}

/** @param {string} text */
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** Why the judge gave no verdict, in words (docs/scenarios.md, "The AI judge"). @param {string} error as the API wrote it */
export function judgeErrorWords(error) {
  if (error.startsWith('the judge needs a language model')) return 'no verdict: the AI judge needs a language model, and this service has none.';
  const unread = /^the judge's answer could not be read: ([\s\S]*)$/.exec(error);
  if (unread) return `no verdict: the AI judge’s answer could not be read (${unread[1]}).`;
  const failed = /^the judge could not answer: ([\s\S]*)$/.exec(error);
  if (failed) return `no verdict: the AI judge did not answer (${failed[1]}).`;
  return `no verdict: ${error}`;
}

/**
 * What the AI judge said of one play, in words: each criterion, met or not, with the judge's reason; or why it gave
 * no verdict. Null when the test has no judge. @param {unknown} judge a transcript's `judge`: `{verdicts}` or `{error}`
 */
export function judgeVerdicts(judge) {
  if (!judge || typeof judge !== 'object') return null;
  const { error, verdicts: given } = /** @type {{ error?: unknown, verdicts?: unknown }} */ (judge);
  const heading = h('h3', {}, 'The AI judge');
  if (typeof error === 'string') return h('div', { class: 'judge' }, heading, h('p', { class: 'not-expected-list' }, h('strong', {}, 'No verdict. '), capital(judgeErrorWords(error).replace(/^no verdict: /, ''))));
  /** @type {{ criterion?: unknown, pass?: unknown, reason?: unknown }[]} */
  const verdicts = Array.isArray(given) ? given : [];
  return h('div', { class: 'judge' }, heading,
    h('ul', { class: 'plain verdicts' }, verdicts.map((v) => h('li', { class: `verdict ${v.pass ? 'ok' : 'bad'}` },
      h('span', { class: `badge ${v.pass ? 'ok' : 'bad'}` }, v.pass ? 'Met' : 'Not met'), ' ',
      h('q', {}, String(v.criterion)),
      h('p', { class: 'meta' }, h('span', { class: 'label' }, 'Why: '), String(v.reason))))));
}

/**
 * The failures of a run, in words: per play when it played more than once, the customer's message each one is about.
 * @param {Run} run GET /v1/scenario-runs/{id}
 */
export function failureList(run) {
  const failures = Array.isArray(run.failures) ? run.failures : [];
  if (failures.length === 0) return null;
  /** @param {number} play @param {number} turn */
  const said = (play, turn) => transcriptsOf(run).find((t) => t.run === play)?.turns?.[turn - 1]?.customer;
  return h('ul', { class: 'failures' }, failures.map((f) => {
    const message = said(f.run, f.turn);
    const where = f.turn === 0 ? 'Before the first message' : `Customer message ${f.turn}`;
    return h('li', { class: 'failure' },
      h('p', { class: 'where' }, run.runs > 1 ? `Run ${f.run}, ` : '', where, typeof message === 'string' ? [': ', h('q', {}, message)] : null),
      h('p', {}, h('span', { class: 'label' }, 'Expected: '), expectedWords(f.expectation)),
      h('p', {}, h('span', { class: 'label' }, 'Got: '), gotWords(f.expectation, f.got)));
  }));
}

/** "Passed 2 of 3" and how often, from a run that is done. @param {{ passed: number, runs: number }} run */
export function passedWords(run) {
  return `Passed ${run.passed} of ${run.runs}`;
}

/**
 * A run's result: passed N of M, the failures, and a link to its conversations.
 * @param {Run} run @param {string} scenarioId @param {string} headingId the heading focus moves to when a run ends
 */
export function runResult(run, scenarioId, headingId) {
  const all = run.passed === run.runs;
  return [
    h('h2', { id: headingId, tabindex: '-1' }, 'Result of the last run'),
    h('p', { class: `outcome ${all ? 'ok' : 'bad'}` }, h('strong', {}, passedWords(run)), run.runs > 1 ? ` (${Math.round((run.passed / run.runs) * 100)} %)` : '', all ? ': every expectation held.' : ': not everything went as expected.'),
    h('p', { class: 'meta' }, `Finished ${when(run.finished_at)}.`),
    failureList(run),
    Array.isArray(run.transcripts) && run.transcripts.length > 0
      ? h('p', {}, h('a', { href: `/dashboard/tests/${encodeURIComponent(scenarioId)}/runs/${encodeURIComponent(run.id)}`, 'data-link': true }, 'Read the conversation', run.transcripts.length > 1 ? 's' : ''))
      : null,
  ];
}

/**
 * A test's earlier runs (GET /v1/scenarios/{id}/runs, newest first): when each was asked for, how it went, and a link
 * to read it. The API keeps the last 20 of each test.
 * @param {Api.GetScenariosIdRuns['runs']} runs @param {string} scenarioId @param {string} headingId
 */
export function runHistory(runs, scenarioId, headingId) {
  return [
    h('h2', { id: headingId }, 'Runs of this test'),
    h('p', { class: 'hint' }, 'The last 20 runs are kept, newest first.'),
    runs.length === 0
      ? h('p', { class: 'empty' }, 'Not run yet.')
      : h('ul', { class: 'plain run-history' }, runs.map((r, i) => {
        const at = `Run ${runs.length - i}, ${when(r.finished_at ?? r.created_at)}`;
        const href = `/dashboard/tests/${encodeURIComponent(scenarioId)}/runs/${encodeURIComponent(r.id)}`;
        if (r.status !== 'done') {
          return h('li', {}, `Run ${runs.length - i}, asked ${when(r.created_at)} `, h('span', { class: 'badge warn' }, r.started_at ? 'Running…' : 'Waiting to start'));
        }
        const all = r.passed === r.runs;
        return h('li', {},
          h('a', { href, 'data-link': true }, at),
          ' ',
          h('span', { class: `badge ${all ? 'ok' : 'bad'}` }, passedWords(r)),
          ' ',
          h('span', { class: 'meta' }, `${Math.round((r.pass_rate ?? 0) * 100)} %`));
      })),
  ];
}

/**
 * Reads a run until it is done, saying how far it is in `status`. Resolves with the run once done; rejects with the
 * API's error. Stops (resolving null) when `signal` aborts: the user left.
 * @param {string} runId @param {(words: string) => void} progress @param {AbortSignal} signal @returns {Promise<Run | null>}
 */
export async function followRun(runId, progress, signal) {
  for (;;) {
    /** @type {Run} */
    const run = await api('GET', `/v1/scenario-runs/${encodeURIComponent(runId)}`, { signal });
    if (signal.aborted) return null;
    if (run.status === 'done') return run;
    progress(run.started_at ? `Running: playing ${run.runs === 1 ? 'the conversation' : `${run.runs} conversations, one after the other`}…` : 'Waiting to start: other tests of this workspace run first…');
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, POLL_MS);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve(undefined);
      }, { once: true });
    });
    if (signal.aborted) return null;
  }
}

/**
 * A run's conversations, line by line: /dashboard/tests/{id}/runs/{runId}.
 * @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx
 */
export function renderRun(main, ctx) {
  const [scenarioId = '', , runId = ''] = ctx.params;
  const back = h('p', {}, h('a', { href: `/dashboard/tests/${encodeURIComponent(scenarioId)}`, 'data-link': true }, 'Back to the test'));
  const heading = h('h1', { tabindex: '-1' }, 'Test run');
  const body = h('div', { 'aria-busy': 'true' }, loading('Loading the run…'));
  const error = errorBox();
  replace(main, back, heading, error.el, body);
  const abort = new AbortController();
  void (async () => {
    try {
      const [scenario, run] = await Promise.all([
        /** @type {Promise<Api.GetScenariosId>} */ (api('GET', `/v1/scenarios/${encodeURIComponent(scenarioId)}`, { signal: abort.signal })).then((a) => a.scenario).catch(() => null),
        /** @type {Promise<Run>} */ (api('GET', `/v1/scenario-runs/${encodeURIComponent(runId)}`, { signal: abort.signal })),
      ]);
      if (abort.signal.aborted) return;
      if (scenario) heading.textContent = `Test run of “${scenario.name}”`;
      body.setAttribute('aria-busy', 'false');
      if (run.status !== 'done') {
        replace(body, h('p', {}, 'This run has not finished yet. ', h('a', { href: `/dashboard/tests/${encodeURIComponent(scenarioId)}`, 'data-link': true }, 'Follow it on the test'), '.'));
        return;
      }
      const channel = scenario ? CHANNELS[scenario.definition.channel] ?? scenario.definition.channel : null;
      replace(body,
        h('p', { class: `outcome ${run.passed === run.runs ? 'ok' : 'bad'}` }, h('strong', {}, passedWords(run)), `. Finished ${when(run.finished_at)}`, channel ? ` on ${channel}` : '', '.'),
        h('p', { class: 'hint' }, 'A test conversation: no customer, colleague, report or webhook sees it.'),
        transcriptsOf(run).map((t) => play(t, run)),
        run.transcripts?.length ? null : [h('p', {}, 'No conversation was played.'), failureList(run)]);
    } catch (err) {
      if (abort.signal.aborted) return;
      body.setAttribute('aria-busy', 'false');
      replace(body);
      error.show(err instanceof ApiError && err.status === 404 ? new Error('This run is no longer kept: each test keeps its last 20 runs.') : err);
    }
  })();
  return () => abort.abort();
}

/** A failure the AI judge gave (shown with its verdicts, not under a reply). @param {{ expectation: string }} f */
const isJudged = (f) => f.expectation === 'judge' || f.expectation.startsWith('judge: ');

/** One play of a run: each message and reply, with who answered; a message whose reply was not as expected says why. @param {Transcript} t @param {Run} run */
function play(t, run) {
  const turns = Array.isArray(t.turns) ? t.turns : [];
  const failures = (Array.isArray(run.failures) ? run.failures : []).filter((f) => f.run === t.run);
  const outside = failures.filter((f) => f.turn === 0 || f.turn > turns.length);
  const passed = failures.length === 0;
  const headingId = `run-${t.run}`;
  return h('section', { class: 'card play', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, run.runs > 1 ? `Run ${t.run}` : 'The conversation', h('span', { class: `badge ${passed ? 'ok' : 'bad'}` }, passed ? 'As expected' : 'Not as expected')),
    h('ol', { class: 'transcript' }, turns.flatMap((turn, i) => [
      h('li', { class: 'msg from-customer' }, h('p', { class: 'label' }, `Customer (message ${i + 1})`), h('p', { class: 'msg-text' }, String(turn.customer ?? ''))),
      h('li', { class: `msg from-bot${turn.passed ? '' : ' not-expected'}` },
        h('p', { class: 'label' }, 'Bot', turn.source ? ` · answered by ${ANSWERED_BY[turn.source] ?? turn.source}` : '', typeof turn.ms === 'number' ? ` · ${seconds(turn.ms)}` : ''),
        h('p', { class: 'msg-text' }, turn.reply == null ? h('em', {}, 'No reply: a person of the team would answer this message.') : String(turn.reply)),
        turn.handoff ? h('p', { class: 'meta' }, turn.handoff.kind === 'forward' ? 'Forwarded the question to the team.' : `Handed over to a person${turn.handoff.connected ? ' (put through)' : ''}.`) : null,
        Array.isArray(turn.tools) && turn.tools.length
          ? h('ul', { class: 'plain meta' }, turn.tools.map((c) => h('li', {}, `Used the tool ${String(c.name)} with ${JSON.stringify(c.args)}: ${c.ok ? 'it answered' : 'it failed'}.`)))
          : null,
        turn.passed ? null : h('ul', { class: 'plain not-expected-list' }, failures.filter((f) => f.turn === i + 1 && !isJudged(f)).map((f) =>
          h('li', {}, h('strong', {}, 'Not as expected: '), `expected ${expectedWords(f.expectation)}; got ${gotWords(f.expectation, f.got)}.`)))),
    ])),
    judgeVerdicts(t.judge),
    // A failure before the first message, or of a message that got no turn (the turn failed): listed after the lines.
    outside.length ? failureList({ ...run, failures: outside }) : null);
}

/** A run's transcripts (stored JSON, read as Transcript says). @param {Run} run @returns {Transcript[]} */
function transcriptsOf(run) {
  return Array.isArray(run.transcripts) ? run.transcripts : [];
}
