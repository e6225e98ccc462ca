// @ts-check
/** Integration: the endpoint of the integrator's system, its key (own or generated, shown once), and the test buttons. */
import { ApiError, api } from './api.js';
import { busy, errorBox, field, h, loading, replace, shownOnce, when } from './dom.js';

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
    h('p', {}, 'Sends a signed website-chat request to your endpoint and shows exactly what came back.'),
    field('Customer message', message), testError.el, testButton, testResult);

  const toolsButton = h('button', { type: 'button' }, 'Test the tools');
  const toolsResult = h('div', { 'aria-live': 'polite', 'data-testid': 'tools-result' });
  const toolsError = errorBox();

  replace(main, h('h1', {}, 'Integration'), current, form, secret,
    h('section', { class: 'card', 'aria-labelledby': 'key' }, h('h2', { id: 'key' }, 'Key'),
      h('p', {}, 'Botlink signs every request with this key; your endpoint checks the signature with it. A new key replaces the old one at once.'),
      keyError.el, newKey),
    test,
    h('section', { class: 'card', 'aria-labelledby': 'tools' }, h('h2', { id: 'tools' }, 'Tools'),
      h('p', {}, 'Fetches your tools manifest now and lists the tools and every problem found in it.'), toolsError.el, toolsButton, toolsResult));

  /** @param {any} i */
  const showCurrent = (i) => {
    current.setAttribute('aria-busy', 'false');
    if (!i) {
      replace(current, h('p', { class: 'empty' }, 'Not connected yet: the built-in AI answers alone. Enter your endpoint URL below and save; a key is generated for you.'));
      return;
    }
    url.value = i.endpoint_url;
    replace(current, h('dl', { class: 'facts' },
      h('div', {}, h('dt', {}, 'Endpoint'), h('dd', { 'data-testid': 'endpoint' }, String(i.endpoint_url))),
      h('div', {}, h('dt', {}, 'Tools base'), h('dd', {}, String(i.tools_base))),
      h('div', {}, h('dt', {}, 'Key'), h('dd', {}, String(i.key_hint))),
      i.health ? h('div', {}, h('dt', {}, 'Health'), h('dd', {}, `${String(i.health.state)} since ${when(i.health.since)}`)) : null,
      h('div', {}, h('dt', {}, 'Saved'), h('dd', {}, when(i.updated_at)))));
  };
  /** @param {any} answer */
  const showKey = (answer) => {
    if (typeof answer?.key === 'string') replace(secret, h('section', { class: 'card', 'aria-label': 'The key just made' }, shownOnce('New key', answer.key, "Copy it now into your endpoint's environment: it is not shown again, not even after a reload.")));
    else replace(secret);
  };

  let stopped = false;
  api('GET', '/v1/integration').then((i) => !stopped && showCurrent(i), (err) => {
    if (stopped) return;
    if (err instanceof ApiError && err.status === 404) showCurrent(null);
    else {
      replace(current);
      saveError.show(err);
    }
  });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    saveError.clear();
    url.removeAttribute('aria-invalid');
    void busy(saveButton, async () => {
      try {
        const answer = await api('PUT', '/v1/integration', { body: { endpoint_url: url.value.trim(), ...(ownKey.value ? { key: ownKey.value } : {}) } });
        ownKey.value = '';
        showCurrent(answer);
        showKey(answer);
      } catch (err) {
        // 422 says why the URL (or key) is refused: shown beside the form.
        url.setAttribute('aria-invalid', 'true');
        saveError.show(err);
      }
    });
  });
  newKey.addEventListener('click', () => {
    keyError.clear();
    if (!confirm('Generate a new key? The current key stops working at once, so your endpoint must get the new one.')) return;
    void busy(newKey, async () => {
      try {
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
        const r = await api('POST', '/v1/integration/test', { body: message.value.trim() ? { message: message.value.trim() } : {} });
        replace(testResult, testReport(r));
      } catch (err) {
        replace(testResult);
        testError.show(err);
      }
    });
  });
  toolsButton.addEventListener('click', () => {
    toolsError.clear();
    replace(toolsResult, loading('Fetching the manifest…'));
    void busy(toolsButton, async () => {
      try {
        replace(toolsResult, toolsReport(await api('POST', '/v1/integration/tools/test')));
      } catch (err) {
        replace(toolsResult);
        toolsError.show(err);
      }
    });
  });
  return () => {
    stopped = true;
  };
}

/** @param {any} r */
function testReport(r) {
  const reply = r.response && typeof r.response === 'object' && typeof r.response.reply === 'string' ? r.response.reply : null;
  return h('div', { class: 'result', 'data-testid': 'test-result' },
    h('p', { class: `badge ${r.outcome === 'answer' ? 'ok' : 'warn'}` }, r.outcome === 'answer' ? 'Answered' : 'No answer'),
    h('dl', { class: 'facts' },
      h('div', {}, h('dt', {}, 'Reason'), h('dd', {}, String(r.reason))),
      r.message ? h('div', {}, h('dt', {}, 'Explanation'), h('dd', {}, String(r.message))) : null,
      h('div', {}, h('dt', {}, 'HTTP status'), h('dd', {}, r.http_status == null ? '—' : String(r.http_status))),
      h('div', {}, h('dt', {}, 'Latency'), h('dd', { 'data-testid': 'latency' }, `${r.latency_ms} ms`)),
      h('div', {}, h('dt', {}, 'Reply'), h('dd', { 'data-testid': 'reply' }, reply ?? '(none)'))),
    Array.isArray(r.problems) && r.problems.length
      ? h('div', {}, h('p', { class: 'label' }, 'Problems:'), h('ul', { class: 'plain' }, r.problems.map((/** @type {any} */ p) => h('li', {}, h('code', {}, String(p.field)), ` ${String(p.message)}`))))
      : h('p', { class: 'meta' }, 'No problems found in the answer.'),
    r.body_excerpt ? h('details', {}, h('summary', {}, 'Body excerpt'), h('pre', {}, String(r.body_excerpt))) : null);
}

/** @param {any} r */
function toolsReport(r) {
  const tools = Array.isArray(r.tools) ? r.tools : [];
  const problems = Array.isArray(r.problems) ? r.problems : [];
  return h('div', { class: 'result' },
    h('p', { class: `badge ${r.status === 'ok' ? 'ok' : 'warn'}` }, r.status === 'ok' ? 'Manifest read' : 'Manifest unavailable'),
    r.error ? h('p', {}, String(r.error)) : null,
    tools.length ? h('ul', { class: 'plain' }, tools.map((/** @type {any} */ t) => h('li', {}, h('code', {}, String(t.name)), t.description ? ` ${String(t.description)}` : ''))) : h('p', { class: 'meta' }, 'No tools in the manifest.'),
    problems.length ? h('div', {}, h('p', { class: 'label' }, 'Problems:'), h('ul', { class: 'plain' }, problems.map((/** @type {any} */ p) => h('li', {}, `${p.tool ? `${String(p.tool)}: ` : ''}${String(p.field ?? '')} ${String(p.message)}`)))) : null);
}
