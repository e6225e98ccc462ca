// @ts-check
/**
 * Overview: how the bot does over a period (docs/analytics.md defines every figure): conversations, who answered,
 * how fast, how your own system behaved, charts over time, the questions the bot could not answer (links to their
 * conversations; owners and admins teach the bot each one from here), and the period's conversations as a file for
 * owners and admins.
 */
/** @import * as Api from './api-types' */
import { ApiError, api, apiFile, configured, isManager } from './api.js';
import { bucketLabel, chart } from './overview-charts.js';
import { busy, errorBox, field, h, loading, replace, uid } from './dom.js';
import { addAnswerForm, pageAnswersIt } from './knowledge-editor.js';
import { firstDayList } from './first-day.js';
import { dayStart, when } from './time.js';

const BASE = '/dashboard';
const HOUR = 3_600_000;
const PERIODS = [
  { value: '24h', label: 'Last 24 hours', ms: 24 * HOUR },
  { value: '7d', label: 'Last 7 days', ms: 7 * 24 * HOUR },
  { value: '30d', label: 'Last 30 days', ms: 30 * 24 * HOUR },
  { value: 'custom', label: 'Choose dates', ms: 0 },
];
const CHANNELS = [['', 'All channels'], ['phone', 'Phone'], ['whatsapp', 'WhatsApp'], ['webchat', 'Website chat']];
const CHANNEL_NAMES = /** @type {Record<string, string>} */ ({ phone: 'Phone', whatsapp: 'WhatsApp', webchat: 'Website chat' });
const SOURCES = /** @type {const} */ ([['integrator', 'Your system'], ['knowledge_base', 'Knowledge base'], ['ai', 'AI'], ['fallback', '“I don’t know”'], ['agent', 'A person']]);
const NO_ANSWER = /** @type {const} */ ([
  ['timeout', 'Too slow (no answer in time)'], ['status', 'Error status'], ['invalid', 'Unreadable answer'], ['empty', 'Empty answer'], ['down', 'Not reachable'],
]);

/** The day after a YYYY-MM-DD day, as YYYY-MM-DD. @param {string} day */
const nextDay = (day) => new Date(Date.parse(`${day}T00:00:00Z`) + 24 * HOUR).toISOString().slice(0, 10);
/** @param {number | null | undefined} ms */
const duration = (ms) => (ms == null ? '—' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
/** @param {number} n @param {number} of */
const share = (n, of) => (of > 0 ? ` (${Math.round((n / of) * 100)}%)` : '');

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderOverview(main, ctx) {
  const period = h('select', {}, PERIODS.map((p) => h('option', { value: p.value }, p.label)));
  period.value = '7d';
  const from = h('input', { type: 'date' });
  const to = h('input', { type: 'date' });
  const dates = h('div', { class: 'row dates', hidden: true }, field('From', from), field('To (included)', to));
  const channel = h('select', {}, CHANNELS.map(([value, label]) => h('option', { value }, label)));
  const error = errorBox();
  const body = h('div', { 'aria-live': 'polite' }, loading('Loading the overview…'));
  const form = h('form', { class: 'card filters', 'aria-label': 'Period and channel' },
    h('div', { class: 'row' }, field('Period', period), field('Channel', channel)), dates, error.el,
    h('button', { type: 'submit', class: 'quiet', hidden: true }, 'Show'));
  // Owners and admins: the first-day list on top until every step is done (first-day.js).
  replace(main, h('h1', {}, 'Overview'), isManager(ctx.session) ? firstDayList() : null, form, body);

  /** @type {(() => void)[]} */
  let stops = [];
  let generation = 0;
  const stopCharts = () => {
    for (const stop of stops) stop();
    stops = [];
  };

  /** The period as the API wants it: ISO times, `to` exclusive. */
  function query() {
    const p = PERIODS.find((x) => x.value === period.value) ?? PERIODS[1];
    let end = new Date(Math.ceil(Date.now() / HOUR) * HOUR);
    let start = new Date(end.getTime() - (p?.ms ?? 0));
    if (period.value === 'custom' && from.value && to.value) {
      // Days of the shop's calendar (the workspace's time zone), not of this computer's.
      start = dayStart(from.value);
      end = dayStart(nextDay(to.value));
    }
    const q = new URLSearchParams({ from: start.toISOString(), to: end.toISOString() });
    if (channel.value) q.set('channel', channel.value);
    return q;
  }

  async function load() {
    const mine = ++generation;
    error.clear();
    stopCharts();
    replace(body, loading('Loading the overview…'));
    const q = query();
    try {
      const [figures, series, questions, set] = await Promise.all([
        /** @type {Promise<Api.GetAnalyticsOverview>} */ (api('GET', `/v1/analytics/overview?${q}`)),
        /** @type {Promise<Api.GetAnalyticsTimeseries>} */ (api('GET', `/v1/analytics/timeseries?${q}`)),
        /** @type {Promise<Api.GetAnalyticsUnanswered>} */ (api('GET', `/v1/analytics/unanswered?${q}`)),
        configured(),
      ]);
      if (mine !== generation) return;
      // "Your system" only once there is one: an integration set, or one that answered in this period.
      const withSystem = set.integration || (figures.integrator?.requests ?? 0) > 0;
      const charts = chartsOf(series, withSystem);
      stops = charts.map((c) => c.stop);
      replace(body,
        figuresOf(figures, withSystem),
        h('section', { 'aria-labelledby': 'ov-charts' }, h('h2', { id: 'ov-charts' }, 'Over time'), h('div', { class: 'charts' }, charts.map((c) => c.el))),
        unansweredOf(questions, ctx),
        isManager(ctx.session) ? exportOf(q) : null);
    } catch (err) {
      if (mine !== generation) return;
      replace(body);
      error.show(err instanceof ApiError ? err.message : String(err));
    }
  }

  period.addEventListener('change', () => {
    dates.hidden = period.value !== 'custom';
    if (period.value !== 'custom' || (from.value && to.value)) void load();
  });
  channel.addEventListener('change', () => void load());
  for (const input of [from, to]) input.addEventListener('change', () => from.value && to.value && void load());
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load();
  });
  void load();
  return () => {
    generation += 1;
    stopCharts();
  };
}

/** @param {string} label @param {string | number} value @param {string} [detail] */
function figure(label, value, detail) {
  return h('div', { class: 'figure' }, h('dt', {}, label), h('dd', {}, h('span', { class: 'number' }, String(value)), detail ? h('span', { class: 'hint' }, detail) : null));
}

/** @param {Api.GetAnalyticsOverview} o the overview's answer @param {boolean} withSystem whether the workspace has (or had) its own system */
function figuresOf(o, withSystem) {
  const sources = SOURCES.filter(([key]) => withSystem || key !== 'integrator');
  const answered = sources.reduce((n, [key]) => n + (o.answered_by[key] ?? 0), 0);
  const ep = o.integrator;
  const down = ep.down_periods;
  return h('div', {},
    h('section', { class: 'card', 'aria-labelledby': 'ov-figures' }, h('h2', { id: 'ov-figures' }, 'Conversations'),
      h('dl', { class: 'figures' },
        figure('Conversations', o.conversations, 'started in this period'),
        figure('Customer messages', o.customer_messages),
        figure('Handled by the bot alone', o.contained, `no person needed${share(o.contained, o.conversations)}`),
        figure('Handed to a person', o.handed_over, share(o.handed_over, o.conversations).trim()),
        figure('First reply, typical', duration(o.first_reply_ms.p50), `slowest 5%: ${duration(o.first_reply_ms.p95)}`),
        // The one question after a colleague closed a conversation (1 to 5).
        o.satisfaction ? figure('Satisfaction', o.satisfaction.average === null ? '–' : `${o.satisfaction.average} / 5`,
          `${o.satisfaction.responses} ${o.satisfaction.responses === 1 ? 'answer' : 'answers'}`) : null)),
    h('section', { class: 'card', 'aria-labelledby': 'ov-answers' }, h('h2', { id: 'ov-answers' }, 'Who answered'),
      h('dl', { class: 'figures' }, sources.map(([key, label]) => figure(label, o.answered_by[key] ?? 0, share(o.answered_by[key] ?? 0, answered).trim()))),
      h('h3', {}, 'First reply by channel'),
      h('div', { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': 'First reply by channel' }, h('table', {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Channel'), h('th', { scope: 'col' }, 'Typical'), h('th', { scope: 'col' }, 'Slowest 5%'))),
        h('tbody', {}, Object.entries(o.first_reply_ms_by_channel ?? {}).map(([ch, p]) => h('tr', {},
          h('th', { scope: 'row' }, CHANNEL_NAMES[ch] ?? ch), h('td', {}, duration(p.p50)), h('td', {}, duration(p.p95)))))))),
    !withSystem ? null : h('section', { class: 'card', 'aria-labelledby': 'ov-endpoint' }, h('h2', { id: 'ov-endpoint' }, 'Your system'),
      h('p', { class: 'hint' }, 'How the endpoint you connected under Integration answered the phone and WhatsApp messages.'),
      h('dl', { class: 'figures' },
        figure('Questions sent', ep.requests),
        figure('Answered', ep.answers, share(ep.answers, ep.requests).trim()),
        figure('Answer time, typical', duration(ep.latency_ms.p50), `slowest 5%: ${duration(ep.latency_ms.p95)}`),
        NO_ANSWER.map(([key, label]) => figure(label, ep.no_answer[key] ?? 0))),
      h('h3', {}, 'When it was down'),
      down.length === 0
        ? h('p', {}, 'It was not down in this period.')
        : h('ul', {}, down.map((d) => h('li', {}, `${when(d.from)} to ${d.to ? when(d.to) : 'now (still down)'}`)))));
}

/** @param {Api.GetAnalyticsTimeseries} s the timeseries answer @param {boolean} withSystem */
function chartsOf(s, withSystem) {
  const sources = SOURCES.filter(([key]) => withSystem || key !== 'integrator');
  const buckets = s.buckets;
  const starts = buckets.map((b) => Date.parse(b.start));
  const base = { starts, bucket: s.bucket, timeZone: s.time_zone };
  const total = (/** @type {number[]} */ values) => values.reduce((n, v) => n + v, 0);
  const count = (/** @type {(typeof buckets)[number]} */ b) => total(Object.values(b.conversations_by_channel));
  const busiest = buckets.length ? buckets.reduce((a, b) => (count(b) > count(a) ? b : a)) : null;
  return [
    chart({
      ...base, id: 'conversations', title: 'Conversations by channel', unit: 'conversations',
      summary: busiest ? `Busiest: ${bucketLabel(Date.parse(busiest.start), s.bucket, s.time_zone)} with ${count(busiest)}.` : 'No conversations.',
      series: Object.entries(CHANNEL_NAMES).map(([key, label]) => ({ label, values: buckets.map((b) => b.conversations_by_channel[key] ?? 0) })),
    }),
    chart({
      ...base, id: 'sources', title: 'Who answered, over time', unit: 'answers', stacked: true,
      summary: `Answers stacked by who gave them: ${sources.map(([key, label]) => `${label} ${total(buckets.map((b) => b.answered_by[key] ?? 0))}`).join(', ')}.`,
      series: sources.map(([key, label]) => ({ label, values: buckets.map((b) => b.answered_by[key] ?? 0) })),
    }),
    ...(!withSystem ? [] : [chart({
      ...base, id: 'latency', title: 'Your system’s answer time (ms)', unit: 'ms',
      summary: 'The typical and the slowest 5% answer time of your endpoint in each period; gaps where it was not asked.',
      series: [
        { label: 'Typical', values: buckets.map((b) => b.integrator_latency_ms.p50) },
        { label: 'Slowest 5%', values: buckets.map((b) => b.integrator_latency_ms.p95) },
      ],
    })]),
  ];
}

/** @param {Api.GetAnalyticsUnanswered} u the unanswered answer @param {import('./app.js').ScreenContext} ctx */
function unansweredOf(u, ctx) {
  const questions = u.questions;
  return h('section', { class: 'card', 'aria-labelledby': 'ov-unanswered' }, h('h2', { id: 'ov-unanswered' }, 'Questions the bot could not answer'),
    h('p', { class: 'hint' }, ctx.session.role === 'agent'
      ? 'Answered with “I don’t know”, or handed to a person. Similar wording is grouped. Add the answers to the knowledge base.'
      : 'Answered with “I don’t know”, or handed to a person. Similar wording is grouped. Add the answer, or say which page answers it: the next customer who asks gets it.'),
    questions.length === 0
      ? h('p', { class: 'empty' }, 'None in this period.')
      : h('ol', { class: 'questions' }, questions.map((q) => h('li', {},
        h('q', {}, q.text),
        h('span', { class: 'meta' }, ` asked ${q.count} ${q.count === 1 ? 'time' : 'times'}, last ${when(q.last_at)}. `),
        // Each conversation named by its customer or their first words (the service's label), as text.
        h('span', { class: 'links' }, h('span', { class: 'sr-only' }, 'Asked in: '),
          (q.sessions ?? []).map((s) => h('a', { href: `${BASE}/conversations/${encodeURIComponent(s.id)}`, 'data-link': true }, s.label))),
        isManager(ctx.session) && q.session_ids[0] ? teach(q.text, q.session_ids[0]) : null))),
    u.complete === false ? h('p', { class: 'hint' }, 'Only the newest 5,000 such messages are grouped; choose a shorter period to see them all.') : null,
    ctx.session.role === 'agent' ? null : h('p', {}, h('a', { href: `${BASE}/knowledge`, 'data-link': true }, 'Go to the knowledge base')));
}

/**
 * Teaching the bot a question it could not answer (docs/knowledge.md, "The team teaches the bot"): each button opens
 * its form below the question, and closes it again.
 * @param {string} question the customer's words @param {string} sessionId the newest conversation that asked it
 */
function teach(question, sessionId) {
  const panel = h('div', { class: 'teach-panel', id: uid('teach'), hidden: true });
  /** @type {HTMLButtonElement[]} */
  const buttons = [];
  /** @param {string} label @param {() => { el: HTMLElement, focus: () => void }} open */
  const opener = (label, open) => {
    const b = h('button', { type: 'button', class: 'quiet', 'aria-expanded': 'false', 'aria-controls': panel.id, 'aria-label': `${label}: “${question.slice(0, 60)}”` }, label);
    b.addEventListener('click', () => {
      const wasOpen = b.getAttribute('aria-expanded') === 'true';
      for (const other of buttons) other.setAttribute('aria-expanded', 'false');
      if (wasOpen) {
        replace(panel);
        panel.hidden = true;
        return;
      }
      const form = open();
      replace(panel, form.el);
      panel.hidden = false;
      b.setAttribute('aria-expanded', 'true');
      form.focus();
    });
    buttons.push(b);
    return b;
  };
  return h('div', { class: 'teach-bot' },
    h('div', { class: 'row' },
      opener('Add as an answer', () => addAnswerForm({ sessionId, question })),
      opener('This page answers it', () => pageAnswersIt({ question }))),
    panel);
}

/** @param {URLSearchParams} q */
function exportOf(q) {
  const status = h('p', { class: 'hint', role: 'status' });
  const error = errorBox();
  /** @param {'csv' | 'jsonl'} format */
  const button = (format) => {
    const b = h('button', { type: 'button', class: 'quiet', onclick: () => void busy(b, () => download(format)) }, format === 'csv' ? 'Download as CSV (spreadsheet)' : 'Download as JSON Lines');
    return b;
  };
  /** @param {'csv' | 'jsonl'} format */
  async function download(format) {
    error.clear();
    status.textContent = 'Preparing the file…';
    try {
      const { blob, name } = await apiFile(`/v1/exports/conversations?${q}&format=${format}`);
      const url = URL.createObjectURL(blob);
      const link = h('a', { href: url, download: name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      status.textContent = `Downloaded ${name}.`;
    } catch (err) {
      status.textContent = '';
      error.show(err instanceof Error ? err.message : String(err));
    }
  }
  return h('section', { class: 'card', 'aria-labelledby': 'ov-export' }, h('h2', { id: 'ov-export' }, 'Export'),
    h('p', { class: 'hint' }, 'The conversations that started in this period, every message and reply, with the customer’s details. Keep the file safe.'),
    h('div', { class: 'row' }, button('csv'), button('jsonl')), error.el, status);
}
