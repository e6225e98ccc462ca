// @ts-check
/**
 * Integration (./integration.js): "Try a new version", replay on the dashboard (docs/integrators.md, "Try a new
 * version: replay" and "Judged replay"). The last customer messages of phone and WhatsApp are sent to a new version of
 * the integrator's system (POST /v1/integration/replay), and each answer is shown beside what the live system answered
 * then; with the workspace's model, a changed answer also says whether the judge found it better, worse or as good,
 * and why. Every text (customers' messages, both systems' answers, the judge's reason) is a text node.
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.PostIntegrationReplay['items']>[number]} Item */
import { ApiError, api } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, replace, showFieldErrors } from './dom.js';
import { when } from './time.js';

/** The most messages one replay sends (docs/integrators.md: 200). */
const MAX_LAST = 200;

/** A replay's verdict in an owner's words. @type {Record<string, string>} */
const VERDICT_WORDS = {
  same: 'Same answer',
  changed: 'Different answer',
  now_failing: 'No answer any more',
  now_answering: 'Answers now',
  still_failing: 'Still no answer',
};

/** The judge's label in words. @type {Record<string, string>} */
const LABEL_WORDS = { better: 'Better', worse: 'Worse', equal: 'As good' };

/** Why an endpoint gave no answer, in words (the Bot Link's reasons, docs/protocol.md §6). @type {Record<string, string>} */
const NO_ANSWER = {
  timeout: 'it did not answer in time',
  status: 'it answered with an error status',
  invalid_json: 'its answer was not JSON',
  cut_off: 'its answer was too long',
  invalid_response: 'its answer was not a valid answer',
  empty_reply: 'its reply was empty',
  not_configured: 'no system was connected',
  invalid_url: 'its address cannot be used',
  refused_address: 'its address is not public',
  tls: 'its certificate could not be trusted',
  connection: 'it could not be reached',
  aborted: 'the message was cut off',
};

/** @param {Item['live'] | Item['candidate']} a one system's answer */
function answerWords(a) {
  if (a?.outcome !== 'answer') return h('em', {}, `No answer: ${NO_ANSWER[String(a?.reason)] ?? String(a?.reason ?? 'unknown')}.`);
  return [String(a.reply ?? ''), a.handoff === 'human' ? ' (hands over to a person)' : a.handoff === 'forward' ? ' (forwards to the team)' : ''];
}

/** The section: the new version's address, its key, how many messages, Replay, and the report. */
export function replaySection() {
  const url = h('input', { type: 'url', name: 'replay_url', autocomplete: 'off', spellcheck: 'false', placeholder: 'https://staging.your-system.example.com/botlink/channel' });
  const key = h('input', { type: 'password', name: 'replay_key', autocomplete: 'off', spellcheck: 'false' });
  const last = h('input', { type: 'number', name: 'replay_last', min: 1, max: MAX_LAST, step: 1, inputmode: 'numeric', value: '50' });
  const error = errorBox();
  const button = h('button', { type: 'submit' }, 'Replay');
  const status = h('p', { class: 'run-status', role: 'status', 'aria-live': 'polite' });
  const result = h('div', { class: 'replay-result', tabindex: '-1', 'aria-label': 'Replay result' });
  const form = h('form', { class: 'card', 'aria-labelledby': 'replay', novalidate: true },
    h('h2', { id: 'replay' }, 'Try a new version'),
    h('p', {}, 'Sends your last real customer messages of phone and WhatsApp to a new version of your system, and shows each answer beside what your live system answered then. ' +
      'Nothing is written to the conversations. With an AI model set up, each different answer is judged better, worse or as good.'),
    field('Address of the new version', url, 'https only, and reachable from the internet.'),
    field('Its key (optional)', key, 'Leave empty to sign with your current key.'),
    field('How many messages', last, `The last 1 to ${MAX_LAST} customer messages.`),
    error.el, button, status, result);
  /** @type {[(f: string) => boolean, HTMLInputElement][]} */
  const controls = [[(f) => f === 'endpoint_url', url], [(f) => f === 'key', key], [(f) => f === 'last', last]];

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void busy(button, async () => {
      clearFieldErrors(controls.map(([, c]) => c));
      error.clear();
      replace(result);
      const n = Number(last.value);
      if (!(Number.isInteger(n) && n >= 1 && n <= MAX_LAST)) {
        showFieldErrors({ details: [{ field: 'last', message: `Give a whole number from 1 to ${MAX_LAST}.` }] }, controls, error);
        return;
      }
      status.textContent = 'Replaying: sending the messages to the new version, then judging the different answers…';
      try {
        /** @type {Api.PostIntegrationReplay} */
        const report = await api('POST', '/v1/integration/replay', { body: { endpoint_url: url.value.trim(), last: n, ...(key.value ? { key: key.value } : {}) } });
        status.textContent = `Replayed ${report.replayed} ${report.replayed === 1 ? 'message' : 'messages'}.`;
        replace(result, replayReport(report));
        result.focus();
      } catch (err) {
        status.textContent = '';
        if (err instanceof ApiError && Array.isArray(err.details) && err.details.length) showFieldErrors(err, controls, error);
        else if (err instanceof ApiError && (err.code === 'invalid_url' || err.code === 'invalid_key')) showFieldErrors({ details: [{ field: err.code === 'invalid_url' ? 'endpoint_url' : 'key', message: err.message }] }, controls, error);
        else error.show(err);
      }
    });
  });
  return form;
}

/** The report: the counts, what the judge found, and each message with both answers. @param {Api.PostIntegrationReplay} r */
export function replayReport(r) {
  /** @type {Record<string, number | undefined>} */
  const s = r.summary ?? {};
  const j = r.judge ?? {};
  const counts = Object.entries(VERDICT_WORDS).filter(([v]) => s[v]).map(([v, words]) => `${words}: ${s[v]}`).join(' · ');
  let judged;
  if (j.status === 'judged') {
    const total = (j.better ?? 0) + (j.worse ?? 0) + (j.equal ?? 0) + (j.not_judged ?? 0);
    judged = total === 0
      ? 'No answer was different, so there was nothing to judge.'
      : `Of the different answers, the AI judge found ${j.worse} worse, ${j.better} better and ${j.equal} as good${j.not_judged ? `; ${j.not_judged} could not be judged` : ''}.`;
  } else if (j.status === 'needs_model') judged = 'The different answers are not judged: the AI judge needs an AI model, and this service has none.';
  else judged = 'The different answers were not judged.';
  const items = r.items ?? [];
  return [
    h('p', { class: `outcome ${s.now_failing || j.worse ? 'bad' : 'ok'}` }, h('strong', {}, `${r.replayed} replayed`), counts ? `: ${counts}.` : '.'),
    h('p', { class: j.worse ? 'not-expected-list' : '' }, judged),
    items.length === 0
      ? h('p', { class: 'empty' }, 'No customer message of phone or WhatsApp asked your system yet, so there was nothing to replay.')
      : h('ol', { class: 'plain replay-items' }, items.map((item) => {
        const label = item.judge && 'label' in item.judge && typeof item.judge.label === 'string' ? item.judge.label : null;
        return h('li', { class: 'replay-item' },
          h('p', {}, h('span', { class: `badge ${item.verdict === 'same' || item.verdict === 'now_answering' ? 'ok' : item.verdict === 'changed' ? (label === 'worse' ? 'bad' : 'warn') : 'bad'}` }, VERDICT_WORDS[String(item.verdict)] ?? String(item.verdict)),
            ' ', h('span', { class: 'meta' }, `${item.channel === 'phone' ? 'Phone' : 'WhatsApp'} · ${when(item.at)}`)),
          h('p', {}, h('span', { class: 'label' }, 'Customer: '), h('q', {}, String(item.message ?? ''))),
          item.verdict === 'same' ? h('p', {}, h('span', { class: 'label' }, 'Both: '), answerWords(item.live)) : [
            h('p', {}, h('span', { class: 'label' }, 'Live system then: '), answerWords(item.live)),
            h('p', {}, h('span', { class: 'label' }, 'New version: '), answerWords(item.candidate)),
          ],
          item.judge
            ? h('p', { class: 'judged' }, h('span', { class: 'label' }, 'AI judge: '),
              'label' in item.judge ? [h('strong', {}, LABEL_WORDS[item.judge.label] ?? item.judge.label), `. ${String(item.judge.reason)}`] : `could not judge (${String(item.judge.error)}).`)
            : null);
      })),
  ];
}
