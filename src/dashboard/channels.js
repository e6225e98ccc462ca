// @ts-check
/** Channels: the phone numbers and handoff settings, and the WhatsApp business number. */
import { ApiError, api } from './api.js';
import { busy, errorBox, field, h, loading, replace, when } from './dom.js';

/** @param {HTMLElement} main */
export function renderChannels(main) {
  const phone = h('div', {}, loading('Loading the phone settings…'));
  const whatsapp = h('div', {}, loading('Loading the WhatsApp settings…'));
  replace(main, h('h1', {}, 'Channels'),
    h('section', { class: 'card', 'aria-labelledby': 'phone' }, h('h2', { id: 'phone' }, 'Phone'), phone),
    h('section', { class: 'card', 'aria-labelledby': 'wa' }, h('h2', { id: 'wa' }, 'WhatsApp'), whatsapp));
  let stopped = false;

  api('GET', '/v1/phone').then((p) => !stopped && replace(phone, phoneForm(p)), (err) => !stopped && replace(phone, h('p', { class: 'error', role: 'alert' }, err.message)));
  api('GET', '/v1/whatsapp').then(
    (w) => !stopped && replace(whatsapp, whatsappForm(w)),
    (err) => !stopped && replace(whatsapp, err instanceof ApiError && err.status === 404 ? whatsappForm(null) : h('p', { class: 'error', role: 'alert' }, err.message)),
  );
  return () => {
    stopped = true;
  };
}

/** @param {any} p the phone settings */
function phoneForm(p) {
  const numbers = h('textarea', { rows: 3, spellcheck: 'false' });
  numbers.value = (p.numbers ?? []).join('\n');
  const transfer = h('input', { type: 'tel', value: p.transfer_number ?? '', autocomplete: 'off' });
  const language = h('input', { type: 'text', value: p.language ?? '', maxlength: 35 });
  const greeting = h('textarea', { rows: 2 });
  greeting.value = p.greeting ?? '';
  const hours = teamHoursFields(p.team_hours);
  const error = errorBox();
  const saved = h('p', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'submit' }, 'Save phone settings');
  const form = h('form', {},
    p.numbers?.length ? null : h('p', { class: 'empty' }, 'No phone number yet: add the number your callers dial (from your Twilio account) to answer calls.'),
    field('Phone numbers, one per line', numbers, 'E.164, like +31201234567.'),
    field('Transfer number (optional)', transfer, 'Where a caller who asks for a person is put through while the team is available.'),
    field('Call language', language, 'A BCP 47 tag, like en-US or nl-NL.'),
    field('Greeting (optional)', greeting, 'Spoken first when a call connects.'),
    hours.el,
    error.el, button, saved);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    saved.textContent = '';
    void busy(button, async () => {
      try {
        const answer = await api('PUT', '/v1/phone', {
          body: {
            numbers: numbers.value.split(/[\s,]+/).filter(Boolean),
            transfer_number: transfer.value.trim() || null,
            team_hours: hours.value(),
            ...(language.value.trim() ? { language: language.value.trim() } : {}),
            greeting: greeting.value.trim() || null,
          },
        });
        numbers.value = answer.numbers.join('\n');
        saved.textContent = `Saved at ${when(answer.updated_at)}.`;
      } catch (err) {
        error.show(err);
      }
    });
  });
  return form;
}

/** @param {any} w the WhatsApp settings, null when none */
function whatsappForm(w) {
  const id = h('input', { type: 'text', value: w?.phone_number_id ?? '', required: true, autocomplete: 'off', inputmode: 'numeric' });
  const token = h('input', { type: 'password', required: true, autocomplete: 'off', spellcheck: 'false' });
  const error = errorBox();
  const info = h('div', { role: 'status' });
  const button = h('button', { type: 'submit' }, w ? 'Replace' : 'Connect');
  /** @param {any} v */
  const describe = (v) => replace(info, v
    ? h('dl', { class: 'facts' },
      h('div', {}, h('dt', {}, 'Number id'), h('dd', {}, String(v.phone_number_id))),
      h('div', {}, h('dt', {}, 'Access token'), h('dd', {}, String(v.token_hint))),
      h('div', {}, h('dt', {}, 'Callback URL for Meta'), h('dd', {}, h('code', {}, String(v.webhook_url)))))
    : h('p', { class: 'empty' }, "Not connected. Enter the phone number id and an access token from Meta's WhatsApp Business settings."));
  describe(w);
  const form = h('form', {}, info,
    field('Phone number id', id, "Meta's phone_number_id of your business number."),
    field('Access token', token, 'The Graph API token replies are sent with; stored sealed and never shown again.'),
    error.el, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    void busy(button, async () => {
      try {
        describe(await api('PUT', '/v1/whatsapp', { body: { phone_number_id: id.value.trim(), access_token: token.value } }));
        token.value = '';
      } catch (err) {
        error.show(err);
      }
    });
  });
  return form;
}

const DAYS = /** @type {const} */ ([['mon', 'Monday'], ['tue', 'Tuesday'], ['wed', 'Wednesday'], ['thu', 'Thursday'], ['fri', 'Friday'], ['sat', 'Saturday'], ['sun', 'Sunday']]);

/**
 * Team hours in the workspace's time zone: a zone and, per day, its ranges as `09:00-12:30, 13:30-17:30` (empty:
 * closed). All days empty: no team hours, the switch alone decides. The API checks the zone and the times and names
 * the field of any mistake (`team_hours.week.mon.0.1`, …).
 * @param {any} current the stored team hours, or null
 */
function teamHoursFields(current) {
  const zone = /** @type {HTMLInputElement} */ (h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: current?.time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone }));
  /** @type {Record<string, HTMLInputElement>} */
  const days = {};
  for (const [key] of DAYS) {
    const ranges = /** @type {string[][]} */ (current?.week?.[key] ?? []);
    days[key] = /** @type {HTMLInputElement} */ (h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'closed', value: ranges.map((r) => `${r[0]}-${r[1]}`).join(', ') }));
  }
  const el = h('fieldset', { class: 'hours' },
    h('legend', {}, 'Team hours (optional)'),
    h('p', { class: 'hint' }, 'When set, a handoff connects a person only within these hours (and while the team switch is on). Per day, ranges like 09:00-12:30, 13:30-17:30; leave a day empty when closed, and every day empty for no team hours.'),
    field('Time zone', zone, 'An IANA time zone, like Europe/Amsterdam: the hours are read on its wall clock.'),
    DAYS.map(([key, name]) => field(name, days[key])));
  return {
    el,
    /** The team_hours to send: null when no day has hours. */
    value() {
      /** @type {Record<string, string[][]>} */
      const week = {};
      for (const [key] of DAYS) {
        const ranges = days[key].value.split(',').map((r) => r.trim()).filter(Boolean).map((r) => r.split(/\s*[-–]\s*/).map((t) => (/^\d:\d\d$/.test(t) ? `0${t}` : t)));
        if (ranges.length > 0) week[key] = ranges;
      }
      return Object.keys(week).length === 0 ? null : { time_zone: zone.value.trim(), week };
    },
  };
}
