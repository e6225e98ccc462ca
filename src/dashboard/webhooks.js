// @ts-check
/** Webhooks: a URL per event, its secret shown once, rotation, the test button and the delivery log with retry. */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetWebhooks['webhooks']>[number]} Webhook */
/** @typedef {NonNullable<Api.GetWebhooksDeliveries['deliveries']>[number]} Delivery */
import { api } from './api.js';
import { busy, errorBox, field, h, loading, replace, shownOnce } from './dom.js';
import { when } from './time.js';

/** How long after a manual retry the log is read again (the attempt is queued, then sent at once). */
const RETRY_SETTLE_MS = 1_500;
/** The events a URL can be set for (PUT /v1/webhooks/{event}; docs/webhooks.md): title and what it is sent for. */
const EVENTS = {
  new_chat: { title: 'New chat', about: 'A visitor starts a conversation in the website chat.' },
  escalation: { title: 'Escalation', about: 'A website-chat visitor asks for a person, with the button or in their own words.' },
  new_lead: { title: 'New lead', about: 'A website-chat visitor leaves their name and contact details.' },
  endpoint_down: { title: 'Endpoint down', about: 'Your bot-link endpoint stopped answering: customers get the built-in AI without waiting for it.' },
  endpoint_recovered: { title: 'Endpoint recovered', about: 'Your bot-link endpoint answers again after being down.' },
};

/** @param {HTMLElement} main */
export function renderWebhooks(main) {
  const endpoints = h('div', {}, loading('Loading webhooks…'));
  const log = h('div', {}, loading('Loading deliveries…'));
  const error = errorBox();
  const refresh = h('button', { type: 'button', class: 'quiet' }, 'Refresh the log');
  replace(main, h('h1', {}, 'Webhooks'),
    h('p', {}, 'Botlink calls your URLs, signed (Standard Webhooks), when something happens in a conversation or to your endpoint.'),
    error.el, endpoints,
    h('section', { 'aria-labelledby': 'log' }, h('h2', { id: 'log' }, 'Deliveries'), refresh, log));
  let stopped = false;

  async function load() {
    try {
      /** @type {Api.GetWebhooks} */
      const answer = await api('GET', '/v1/webhooks');
      if (stopped) return;
      /** @type {Map<string | undefined, Webhook>} */
      const byEvent = new Map((answer.webhooks ?? []).map((w) => [w.event, w]));
      replace(endpoints, Object.entries(EVENTS).map(([event, { title, about }]) => endpointCard(event, title, about, byEvent.get(event), loadLog)));
    } catch (err) {
      if (!stopped) {
        replace(endpoints);
        error.show(err);
      }
    }
  }
  async function loadLog() {
    try {
      /** @type {Api.GetWebhooksDeliveries} */
      const answer = await api('GET', '/v1/webhooks/deliveries?limit=20');
      if (stopped) return;
      const deliveries = answer.deliveries ?? [];
      replace(log, deliveries.length === 0
        ? h('p', { class: 'empty' }, 'No deliveries yet. Set a URL above and press its Test button to send one.')
        : h('ul', { class: 'notes' }, deliveries.map((d) => delivery(d, loadLog))));
    } catch (err) {
      if (!stopped) replace(log, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));
    }
  }
  refresh.addEventListener('click', () => void busy(refresh, loadLog));
  void load();
  void loadLog();
  return () => {
    stopped = true;
  };
}

/** @param {string} event @param {string} title @param {string} about @param {Webhook | undefined} w @param {() => Promise<void>} reloadLog */
function endpointCard(event, title, about, w, reloadLog) {
  const url = h('input', { type: 'url', required: true, value: w?.url ?? '', placeholder: 'https://your-system.example.com/hooks', autocomplete: 'off' });
  const error = errorBox();
  const secret = h('div', { 'aria-live': 'polite' });
  const status = h('p', { class: 'meta' }, w
    ? `${w.enabled ? 'Enabled' : `Disabled${w.disabled_reason ? `: ${String(w.disabled_reason)}` : ''}`} · secret ${String(w.secret_hint)} · last success ${when(w.last_success_at)}`
    : 'Not set.');
  const save = h('button', { type: 'submit' }, 'Save');
  const rotate = h('button', { type: 'button', class: 'quiet', disabled: !w }, 'Rotate the secret');
  const test = h('button', { type: 'button', class: 'quiet', disabled: !w }, 'Test');
  const result = h('p', { class: 'hint', role: 'status' });
  const form = h('form', { class: 'card', 'aria-label': `${title} webhook` }, h('h2', {}, title), h('p', {}, about), status, field('URL', url), error.el, h('div', { class: 'row' }, save, rotate, test), result, secret);
  /** @param {Api.PutWebhooksEvent | Api.PostWebhooksEventSecret} answer */
  const showSecret = (answer) => typeof answer.secret === 'string' && replace(secret, shownOnce('Signing secret', answer.secret, 'Copy it into your receiver now: it is not shown again.'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    error.clear();
    void busy(save, async () => {
      try {
        /** @type {Api.PutWebhooksEvent} */
        const answer = await api('PUT', `/v1/webhooks/${event}`, { body: { url: url.value.trim() } });
        rotate.disabled = false;
        test.disabled = false;
        status.textContent = `Saved · secret ${String(answer.secret_hint)}`;
        showSecret(answer);
      } catch (err) {
        error.show(err);
      }
    });
  });
  rotate.addEventListener('click', () => {
    error.clear();
    if (!confirm('Make a new secret? For 24 hours deliveries are signed with both the new and the previous one.')) return;
    void busy(rotate, async () => {
      try {
        /** @type {Api.PostWebhooksEventSecret} */
        const answer = await api('POST', `/v1/webhooks/${event}/secret`);
        showSecret(answer);
      } catch (err) {
        error.show(err);
      }
    });
  });
  test.addEventListener('click', () => {
    error.clear();
    result.textContent = 'Sending the test event…';
    void busy(test, async () => {
      try {
        /** @type {Api.PostWebhooksTest} */
        const d = await api('POST', '/v1/webhooks/test', { body: { event } });
        result.textContent = `Test ${String(d.status)}: HTTP ${d.last_status ?? '—'}${d.last_error ? `, ${String(d.last_error)}` : ''}.`;
        await reloadLog();
      } catch (err) {
        result.textContent = '';
        error.show(err);
      }
    });
  });
  return form;
}

/** @param {Delivery} d @param {() => Promise<void>} reloadLog */
function delivery(d, reloadLog) {
  const retry = h('button', { type: 'button', class: 'quiet' }, 'Retry now');
  const error = errorBox();
  retry.addEventListener('click', () => {
    error.clear();
    void busy(retry, async () => {
      try {
        await api('POST', `/v1/webhooks/deliveries/${encodeURIComponent(String(d.id))}/retry`);
        // Queued (202): the attempt goes out right after; the log is read again once it has had time to.
        retry.textContent = 'Queued…';
        await new Promise((resolve) => setTimeout(resolve, RETRY_SETTLE_MS));
        await reloadLog();
      } catch (err) {
        error.show(err);
      }
    });
  });
  const attempts = d.attempts ?? [];
  return h('li', {},
    h('p', {}, h('strong', {}, String(d.event)), ` · ${String(d.status)} · ${d.attempt_count} attempts · ${when(d.created_at)}`),
    d.last_error ? h('p', { class: 'meta' }, `Last error: ${String(d.last_error)}`) : null,
    attempts.length ? h('details', {}, h('summary', {}, 'Attempts'), h('ul', { class: 'plain' }, attempts.map((a) =>
      h('li', {}, `#${a.attempt} ${String(a.status)} · HTTP ${a.http_status ?? '—'} · ${a.latency_ms} ms${a.error ? ` · ${String(a.error)}` : ''}`)))) : null,
    error.el, retry);
}
