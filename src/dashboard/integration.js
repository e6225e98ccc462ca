// @ts-check
/**
 * Integration: the endpoint of the integrator's system, how it is doing (its health, read again every
 * HEALTH_POLL_MS while the page is open), its key (own or generated, shown once), the test buttons, and "Try a new
 * version" (replay, ./integration-replay.js).
 */
/** @import * as Api from './api-types' */
import { ApiError, api, configured } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, loading, replace, showFieldErrors, shownOnce } from './dom.js';
import { replaySection } from './integration-replay.js';
import { clock, shortWhen, when } from './time.js';

/** How often the endpoint's health is read again while the page is open, ms. */
const HEALTH_POLL_MS = 10_000;

/** @param {HTMLElement} main */
export function renderIntegration(main) {
  const current = h('div', { 'aria-busy': 'true' }, loading('Loading the integration…'));
  const url = h('input', { type: 'url', name: 'endpoint_url', required: true, placeholder: 'https://your-system.example.com/botlink/channel', autocomplete: 'off' });
  const ownKey = h('input', { type: 'password', name: 'key', autocomplete: 'off', minlength: 32, spellcheck: 'false' });
  const saveError = errorBox();
  const saveButton = h('button', { type: 'submit' }, 'Save');
  const secret = h('div');
  const form = h('form', { class: 'card', 'aria-labelledby': 'endpoint' },
    h('h2', { id: 'endpoint' }, 'Endpoint'),
    field('Endpoint URL', url, 'A public https:// address of your system that answers the signed channel requests.'),
    field('Own key (optional)', ownKey, 'At least 32 characters. Leave empty to keep the current key, or to have one generated the first time.'),
    saveError.el, saveButton);
  saveError.el.id = 'save-error';
  url.setAttribute('aria-errormessage', saveError.el.id);

  const keyError = errorBox();
  const newKey = h('button', { type: 'button' }, 'Generate a new key');

  const message = h('input', { type: 'text', name: 'message', value: 'Where is my order 1234?', maxlength: 2000 });
  const testButton = h('button', { type: 'submit' }, 'Test');
  const testResult = h('div', { 'aria-live': 'polite' });
  const testError = errorBox();
  const test = h('form', { class: 'card', 'aria-labelledby': 'test' },
    h('h2', { id: 'test' }, 'Test the endpoint'),
    h('p', {}, 'Sends a signed test question to the endpoint URL above (saved or not) and shows what came back.'),
    field('Customer message', message), testError.el, testButton, testResult);

  const toolsButton = h('button', { type: 'button' }, 'Test the tools');
  const toolsResult = h('div', { 'aria-live': 'polite', 'data-testid': 'tools-result' });
  const toolsError = errorBox();

  const health = healthSection();

  replace(main, h('h1', {}, 'Integration'), current, health.el, form, secret,
    h('section', { class: 'card', 'aria-labelledby': 'key' }, h('h2', { id: 'key' }, 'Key'),
      h('p', {}, 'Botlink signs every request with this key; your endpoint checks the signature with it. A new key replaces the old one at once.'),
      keyError.el, newKey),
    test,
    h('section', { class: 'card', 'aria-labelledby': 'tools' }, h('h2', { id: 'tools' }, 'Tools'),
      h('p', {}, 'Fetches your tools manifest now and lists the tools and every problem found in it.'), toolsError.el, toolsButton, toolsResult),
    replaySection());

  /** @param {Api.GetIntegration | null} i */
  const showCurrent = (i) => {
    current.setAttribute('aria-busy', 'false');
    if (!i) {
      replace(current, h('p', { class: 'empty' }, 'Not connected yet: the built-in AI answers alone. Enter your endpoint URL below and save; a key is generated for you.'));
      return;
    }
    url.value = i.endpoint_url ?? '';
    replace(current, h('dl', { class: 'facts' },
      h('div', {}, h('dt', {}, 'Endpoint'), h('dd', { 'data-testid': 'endpoint' }, String(i.endpoint_url))),
      h('div', {}, h('dt', {}, 'Tools address'), h('dd', {}, String(i.tools_base))),
      h('div', {}, h('dt', {}, 'Key'), h('dd', {}, String(i.key_hint))),
      h('div', {}, h('dt', {}, 'Saved'), h('dd', {}, when(i.updated_at)))));
  };
  /** @param {Api.PutIntegration | Api.PostIntegrationKey} answer */
  const showKey = (answer) => {
    if (typeof answer?.key === 'string') replace(secret, h('section', { class: 'card', 'aria-label': 'The key just made' }, shownOnce('New key', answer.key, "Copy it now into your endpoint's environment: it is not shown again, not even after a reload.")));
    else replace(secret);
  };

  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  /** Whether an integration is saved: GET /v1/integration answers 404 without one, so it is not asked then. */
  let saved = false;
  configured().then(async (set) => {
    saved = set.integration;
    /** @type {Api.GetIntegration | null} */
    const i = saved ? await api('GET', '/v1/integration') : null;
    if (stopped) return;
    showCurrent(i);
    health.show(i?.health ?? null);
  }).catch((err) => {
    if (stopped) return;
    if (err instanceof ApiError && err.status === 404) {
      // Removed between the two reads.
      saved = false;
      showCurrent(null);
      health.show(null);
    } else {
      replace(current);
      saveError.show(err);
    }
  }).finally(() => !stopped && schedule());

  // Only the health is read again: the form keeps whatever the owner is typing.
  async function refreshHealth() {
    if (!saved) return;
    try {
      /** @type {Api.GetIntegration} */
      const i = await api('GET', '/v1/integration');
      if (!stopped) health.show(i.health ?? null);
    } catch (err) {
      if (stopped) return;
      if (err instanceof ApiError && err.status === 404) health.show(null);
      else health.failed(err);
    }
  }
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      // A tab in the background is not read; the next visible tick catches up.
      if (!document.hidden) await refreshHealth();
      if (!stopped) schedule();
    }, HEALTH_POLL_MS);
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    saveError.clear();
    clearFieldErrors([url, ownKey]);
    void busy(saveButton, async () => {
      try {
        /** @type {Api.PutIntegration} */
        const answer = await api('PUT', '/v1/integration', { body: { endpoint_url: url.value.trim(), ...(ownKey.value ? { key: ownKey.value } : {}) } });
        ownKey.value = '';
        saved = true;
        showCurrent(answer);
        showKey(answer);
        await refreshHealth();
      } catch (err) {
        // 422 says why the URL (or key) is refused: shown under the field it is about.
        showFieldErrors(err, [[(f) => f === 'endpoint_url', url], [(f) => f === 'key', ownKey]], saveError);
      }
    });
  });
  newKey.addEventListener('click', () => {
    keyError.clear();
    if (!confirm('Generate a new key? The current key stops working at once, so your endpoint must get the new one.')) return;
    void busy(newKey, async () => {
      try {
        /** @type {Api.PostIntegrationKey} */
        const answer = await api('POST', '/v1/integration/key', { body: {} });
        showCurrent(answer);
        showKey(answer);
      } catch (err) {
        keyError.show(err);
      }
    });
  });
  test.addEventListener('submit', (event) => {
    event.preventDefault();
    testError.clear();
    replace(testResult, loading('Waiting for your endpoint…'));
    void busy(testButton, async () => {
      try {
        // The URL in the form is what is tested, saved or not (with the own key typed, when there is one).
        const typed = url.value.trim();
        /** @type {Api.PostIntegrationTest} */
        const r = await api('POST', '/v1/integration/test', {
          body: {
            ...(message.value.trim() ? { message: message.value.trim() } : {}),
            ...(typed ? { endpoint_url: typed } : {}),
            ...(typed && ownKey.value ? { key: ownKey.value } : {}),
          },
        });
        replace(testResult, testReport(r));
      } catch (err) {
        replace(testResult);
        clearFieldErrors([url, ownKey]);
        showFieldErrors(err, [[(f) => f === 'endpoint_url', url], [(f) => f === 'key', ownKey]], testError);
      }
      // What the test saw is also what the endpoint's health learnt.
      await refreshHealth();
    });
  });
  toolsButton.addEventListener('click', () => {
    toolsError.clear();
    replace(toolsResult, loading('Fetching the manifest…'));
    void busy(toolsButton, async () => {
      try {
        /** @type {Api.PostIntegrationToolsTest} */
        const answer = await api('POST', '/v1/integration/tools/test');
        replace(toolsResult, toolsReport(answer));
      } catch (err) {
        replace(toolsResult);
        toolsError.show(err);
      }
    });
  });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** GET /v1/integration `health` (src/integration/integration-service.ts). @typedef {NonNullable<Api.GetIntegration['health']>} HealthView */

/** The words, icon and colour of each state: the words carry the meaning, the icon and colour repeat it. */
const STATES = {
  healthy: { word: 'Healthy', icon: '✓', tone: 'ok' },
  degraded: { word: 'Slow', icon: '!', tone: 'warn' },
  down: { word: 'Down', icon: '✕', tone: 'bad' },
  probing: { word: 'Recovering', icon: '↻', tone: 'info' },
};

/** The recent outcomes, in the owner's words: [key, one, many]. */
const OUTCOMES = /** @type {const} */ ([
  ['answer', 'answer', 'answers'],
  ['invalid', 'invalid answer', 'invalid answers'],
  ['timeout', 'timeout', 'timeouts'],
  ['connection', 'connection failure', 'connection failures'],
  ['status_5xx', 'server error', 'server errors'],
]);

/**
 * The endpoint's health: a status line (a live region, changed only when what it says changes, so a poll that finds
 * nothing new announces nothing) and the facts under it.
 */
function healthSection() {
  const status = h('p', { class: 'health-status', role: 'status', 'aria-atomic': 'true', 'data-testid': 'health-status' });
  const facts = h('div', {}, loading('Reading the health…'));
  const rule = h('p', { class: 'hint', 'data-testid': 'health-rule' });
  const note = h('p', { class: 'hint' });
  const el = h('section', { class: 'card', 'aria-labelledby': 'health', hidden: true },
    h('h2', { id: 'health' }, 'Endpoint health'), status, rule, facts, note);
  let said = '';
  return {
    el,
    /** @param {HealthView | null | undefined} v */
    show(v) {
      // Not connected, or a service without the health: nothing to show.
      el.hidden = !v;
      if (!v) return;
      const fresh = v.contacted === false;
      const state = fresh ? { word: 'Not contacted yet', icon: '…', tone: 'info' } : STATES[v.state] ?? { word: String(v.state), icon: '?', tone: 'info' };
      const headline = v.state === 'down' ? `${state.word} since ${shortWhen(v.since)}` : state.word;
      const sentence = fresh ? 'no question has been sent to your endpoint since it was saved. Press Test below to try it now.' : stateSentence(v);
      if (`${headline}: ${sentence}` !== said) {
        said = `${headline}: ${sentence}`;
        replace(status, h('span', { class: 'health-icon', 'aria-hidden': 'true' }, state.icon), ' ', h('strong', {}, headline), sentence ? `: ${sentence}` : '');
        status.className = `health-status ${state.tone}`;
      }
      rule.textContent = ruleSentence(v);
      /** @param {string} k */
      const count = (k) => Number(/** @type {Record<string, unknown>} */ (v.recent ?? {})[k]) || 0;
      const total = OUTCOMES.reduce((n, [k]) => n + count(k), 0);
      replace(facts, h('dl', { class: 'facts' },
        h('div', {}, h('dt', {}, 'Since'), h('dd', { 'data-testid': 'health-since' }, when(v.since))),
        h('div', { class: 'wide' }, h('dt', {}, 'Last problem'), h('dd', { 'data-testid': 'health-problem' }, v.last_problem == null ? 'None seen'
          : [v.advice ?? 'Your endpoint failed.', ' ', h('details', {}, h('summary', {}, 'Details for your developer'), h('code', {}, String(v.last_problem)))])),
        h('div', {}, h('dt', {}, 'Almost every answer came within'), h('dd', { 'data-testid': 'health-p99' }, v.answer_p99_ms == null ? 'No answer lately' : duration(v.answer_p99_ms))),
        h('div', { class: 'wide' }, h('dt', {}, 'Recent requests'), h('dd', { 'data-testid': 'health-recent' }, total === 0
          ? 'None lately'
          : h('ul', { class: 'mix' }, OUTCOMES.map(([k, one, many]) => {
            const n = count(k);
            return h('li', { class: n > 0 && k !== 'answer' ? 'problem' : null }, h('strong', {}, n), ` ${n === 1 ? one : many}`);
          }))))));
      note.textContent = `Checked ${clock()}; read again every ${HEALTH_POLL_MS / 1000} s while this page is open.`;
    },
    /** A poll that failed: the last known health stays, with why it may be old. @param {unknown} err */
    failed(err) {
      note.textContent = `Could not read the health just now (${err instanceof Error ? err.message : String(err)}); showing what was known before.`;
    },
  };
}

/** What the state means for the customers, in a sentence. @param {HealthView} v */
function stateSentence(v) {
  switch (v.state) {
    case 'healthy':
      return 'customers’ questions go to your endpoint and wait for its answer as usual.';
    case 'degraded':
      return `your endpoint failed lately; customers still wait up to ${waits(v.wait_ms)} for its answer.`;
    case 'down':
      return `customers are answered by the built-in AI without waiting for your endpoint; we keep trying it${v.probe_interval_ms ? ` every ${duration(v.probe_interval_ms)}` : ''}.`;
    case 'probing':
      return `your endpoint answers again since ${shortWhen(v.since)}; customers wait up to ${waits(v.wait_ms)} for its answer again.`;
    default:
      return '';
  }
}

/**
 * When we stop waiting, in one sentence an integrator understands (docs/integrators.md §7 says the same).
 * @param {HealthView} v
 */
function ruleSentence(v) {
  if (!v.deadline_ms || !v.down_after) return '';
  const { phone, whatsapp } = v.deadline_ms;
  const within = v.down_after.within_ms === 60_000 ? 'a minute' : duration(v.down_after.within_ms);
  const retry = v.probe_interval_ms ? ` and try it every ${duration(v.probe_interval_ms)}` : '';
  return `We wait the full ${duration(phone)} on the phone and ${duration(whatsapp)} on WhatsApp for your endpoint's answer, ` +
    `unless it failed ${v.down_after.failures} times in a row, each within ${within} of the last; then we stop waiting${retry} until it answers again.`;
}

/** The waits of the two channels, said once when they are the same. @param {{ phone: number, whatsapp: number }} w */
function waits(w) {
  if (w.phone === w.whatsapp) return duration(w.phone);
  return `${duration(w.phone)} on the phone and ${duration(w.whatsapp)} on WhatsApp`;
}

/** 850 ms, 1.2 s, 15 s. @param {number} ms */
function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** @param {Api.PostIntegrationTest} r */
function testReport(r) {
  const reply = r.response && typeof r.response === 'object' && 'reply' in r.response && typeof r.response.reply === 'string' ? r.response.reply : null;
  return h('div', { class: 'result', 'data-testid': 'test-result' },
    h('p', { class: `badge ${r.outcome === 'answer' ? 'ok' : 'warn'}` }, r.outcome === 'answer' ? 'Answered' : 'No answer'),
    r.advice ? h('p', { 'data-testid': 'advice' }, String(r.advice)) : null,
    r.signed_with === 'temporary_key' ? h('p', { class: 'notice' }, 'Signed with a temporary key, because none is saved yet: save the endpoint to get the key your system checks signatures with.') : null,
    h('dl', { class: 'facts' },
      h('div', {}, h('dt', {}, 'Tested'), h('dd', {}, String(r.endpoint_url ?? ''))),
      h('div', {}, h('dt', {}, 'Time to answer'), h('dd', { 'data-testid': 'latency' }, `${r.latency_ms} ms`)),
      h('div', {}, h('dt', {}, 'Reply'), h('dd', { 'data-testid': 'reply' }, reply ?? 'No reply'))),
    h('details', {}, h('summary', {}, 'Details for your developer'),
      h('dl', { class: 'facts' },
        h('div', {}, h('dt', {}, 'Reason code'), h('dd', {}, String(r.reason))),
        r.message ? h('div', {}, h('dt', {}, 'Engine message'), h('dd', {}, String(r.message))) : null,
        h('div', {}, h('dt', {}, 'HTTP status'), h('dd', {}, r.http_status == null ? 'none' : String(r.http_status)))),
      r.body_excerpt ? h('div', {}, h('p', { class: 'label' }, 'The start of what your system sent back:'), h('pre', {}, String(r.body_excerpt))) : null),
    Array.isArray(r.problems) && r.problems.length
      ? h('div', {}, h('p', { class: 'label' }, 'Problems:'), h('ul', { class: 'plain' }, r.problems.map((p) => h('li', {}, h('code', {}, String(p.field)), ` ${String(p.message)}`))))
      : h('p', { class: 'meta' }, 'No problems found in the answer.'));
}

/** @param {Api.PostIntegrationToolsTest} r */
function toolsReport(r) {
  const tools = r.tools ?? [];
  const problems = r.problems ?? [];
  return h('div', { class: 'result' },
    h('p', { class: `badge ${r.status === 'ok' ? 'ok' : 'warn'}` }, r.status === 'ok' ? 'Manifest read' : 'Manifest unavailable'),
    r.error ? h('p', {}, String(r.error)) : null,
    tools.length ? h('ul', { class: 'plain' }, tools.map((t) => h('li', {}, h('code', {}, String(t.name)), t.description ? ` ${String(t.description)}` : ''))) : h('p', { class: 'meta' }, 'No tools in the manifest.'),
    problems.length ? h('div', {}, h('p', { class: 'label' }, 'Problems:'), h('ul', { class: 'plain' }, problems.map((p) => h('li', {}, `${p.tool ? `${String(p.tool)}: ` : ''}${String(p.field ?? '')} ${String(p.message)}`)))) : null);
}
