// @ts-check
/**
 * Channels: everything an owner sets up to be reached, in plain words (docs/glossary.md for the few terms that stay):
 * the website chat (its sites, its switch, the line to paste into the website), the phone (numbers as people write
 * them, what to paste into Twilio, whether calls can come in yet) and WhatsApp (what to paste into Meta). Each card
 * draws itself again from the answer of its save, so what is shown is what was stored.
 */
/** @import * as Api from './api-types' */
import { ApiError, api, configured } from './api.js';
import { busy, clearFieldErrors, copyable, errorBox, field, h, loading, replace, showFieldErrors } from './dom.js';
import { browserTimeZone, when } from './time.js';
import { localAddressNote, widgetSnippet } from './public-address.js';

/** @param {HTMLElement} main */
export function renderChannels(main) {
  const webchat = h('div', {}, loading('Loading the website chat settings…'));
  const phone = h('div', {}, loading('Loading the phone settings…'));
  const whatsapp = h('div', {}, loading('Loading the WhatsApp settings…'));
  replace(main, h('h1', {}, 'Channels'),
    h('section', { class: 'card', 'aria-labelledby': 'webchat' }, h('h2', { id: 'webchat' }, 'Website chat'), webchat),
    h('section', { class: 'card', 'aria-labelledby': 'phone' }, h('h2', { id: 'phone' }, 'Phone'), phone),
    h('section', { class: 'card', 'aria-labelledby': 'wa' }, h('h2', { id: 'wa' }, 'WhatsApp'), whatsapp));
  let stopped = false;
  /** @param {HTMLElement} where @param {unknown} err */
  const failed = (where, err) => !stopped && replace(where, h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err)));

  /** @type {Promise<Api.GetChannelsSetup>} */
  const setup = api('GET', '/v1/channels/setup');
  Promise.all([/** @type {Promise<Api.GetWebchat>} */ (api('GET', '/v1/webchat')), /** @type {Promise<Api.GetKeysWidget>} */ (api('GET', '/v1/keys/widget')), setup]).then(
    ([settings, key, s]) => !stopped && replace(webchat, webchatForm(settings, String(key.key), s)),
    (err) => failed(webchat, err),
  );
  Promise.all([/** @type {Promise<Api.GetPhone>} */ (api('GET', '/v1/phone')), /** @type {Promise<Api.GetWorkspace | null>} */ (api('GET', '/v1/workspace')).catch(() => null)]).then(
    ([p, workspace]) => !stopped && replace(phone, phoneCard(p, workspace?.time_zone ?? null)),
    (err) => failed(phone, err),
  );
  // GET /v1/whatsapp answers 404 until a number is saved: asked only when GET /v1/workspace says one is.
  const saved = configured().then((set) => (set.whatsapp ? /** @type {Promise<Api.GetWhatsapp>} */ (api('GET', '/v1/whatsapp')) : null));
  Promise.all([saved.catch((err) => (err instanceof ApiError && err.status === 404 ? null : Promise.reject(err))), setup]).then(
    ([w, s]) => !stopped && replace(whatsapp, whatsappCard(w, s)),
    (err) => failed(whatsapp, err),
  );
  return () => {
    stopped = true;
  };
}

/**
 * The website chat: on for the listed sites while the switch is on.
 * @param {Api.GetWebchat} settings @param {string} key @param {Api.GetChannelsSetup} setup
 */
function webchatForm(settings, key, setup) {
  const el = h('div', {});
  const draw = (/** @type {typeof settings} */ s, /** @type {string} */ savedNote) => {
    const sites = h('textarea', { rows: 3, spellcheck: 'false', autocomplete: 'off' });
    const origins = s.allowed_origins ?? [];
    sites.value = origins.join('\n');
    const on = h('input', { type: 'checkbox', role: 'switch', checked: s.enabled });
    const thisSite = location.origin;
    const addThisSite = h('button', { type: 'button', class: 'quiet' }, `Add this site (${thisSite})`);
    addThisSite.addEventListener('click', () => {
      const listed = sites.value.split(/\s+/).filter(Boolean);
      if (!listed.includes(thisSite)) sites.value = [...listed, thisSite].join('\n');
      sites.focus();
    });
    const error = errorBox();
    const saved = h('p', { class: 'hint', role: 'status' }, savedNote);
    const button = h('button', { type: 'submit' }, 'Save website chat');
    const working = s.enabled && origins.length > 0;
    const state = working
      ? h('p', { class: 'ok-note', 'data-testid': 'webchat-state' }, `On: visitors of ${origins.join(', ')} can chat with you.`)
      : h('p', { class: 'notice', 'data-testid': 'webchat-state' }, !s.enabled
        ? 'Off: visitors are told the chat is closed. Switch it on below.'
        : 'Off until you add your website below: the chat answers only on the sites you list.');
    const form = h('form', { 'aria-label': 'Website chat settings' },
      h('label', { class: 'checkline' }, on, 'The chat is on'),
      field('Websites that show the chat, one per line', sites, 'The address of your shop as a visitor sees it in the address bar, like https://www.yourshop.example. A page of it works too: its site is kept.'),
      h('div', { class: 'row' }, addThisSite),
      error.el, button, saved);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      error.clear();
      clearFieldErrors([sites]);
      saved.textContent = '';
      void busy(button, async () => {
        try {
          /** @type {Api.PutWebchat} */
          const answer = await api('PUT', '/v1/webchat', { body: { allowed_origins: sites.value.split(/[\s,]+/).filter(Boolean), enabled: on.checked } });
          // A pasted page address was taken as its site: the notes say so, in words.
          draw(answer, [`Saved at ${when(answer.updated_at)}.`, ...(Array.isArray(answer.notes) ? answer.notes : [])].join(' '));
          /** @type {HTMLElement | null} */ (el.querySelector('[data-testid="webchat-state"]'))?.focus?.();
        } catch (err) {
          showFieldErrors(err, [[(f) => f.startsWith('allowed_origins'), sites]], error);
        }
      });
    });
    replace(el, state, form,
      h('h3', {}, 'Put the chat on your website'),
      widgetSnippet(String(setup.widget?.script_url), key),
      h('p', {}, h('a', { href: `/widget/demo?key=${encodeURIComponent(key)}`, target: '_blank', rel: 'noopener' }, 'Try the chat on a sample shop page'),
        ` (it works once ${thisSite} is listed above and the chat is on).`));
  };
  draw(settings, '');
  return el;
}

/**
 * Countries whose numbers people write without the country code, and the time zone that suggests each. The calling
 * code turns `020 123 4567` into `+31 20 123 4567` (docs/phone.md, "Numbers").
 */
const COUNTRIES = /** @type {const} */ ([
  ['44', 'United Kingdom', 'Europe/London'], ['353', 'Ireland', 'Europe/Dublin'], ['31', 'Netherlands', 'Europe/Amsterdam'],
  ['32', 'Belgium', 'Europe/Brussels'], ['352', 'Luxembourg', 'Europe/Luxembourg'], ['49', 'Germany', 'Europe/Berlin'],
  ['33', 'France', 'Europe/Paris'], ['34', 'Spain', 'Europe/Madrid'], ['351', 'Portugal', 'Europe/Lisbon'],
  ['39', 'Italy', 'Europe/Rome'], ['41', 'Switzerland', 'Europe/Zurich'], ['43', 'Austria', 'Europe/Vienna'],
  ['45', 'Denmark', 'Europe/Copenhagen'], ['46', 'Sweden', 'Europe/Stockholm'], ['47', 'Norway', 'Europe/Oslo'],
  ['358', 'Finland', 'Europe/Helsinki'], ['48', 'Poland', 'Europe/Warsaw'], ['1', 'United States or Canada', 'America/New_York'],
  ['61', 'Australia', 'Australia/Sydney'], ['64', 'New Zealand', 'Pacific/Auckland'],
]);

/** Languages a call can be held in (the speech recognition and voice of the phone provider). */
const CALL_LANGUAGES = /** @type {const} */ ([
  ['en-GB', 'English (United Kingdom)'], ['en-US', 'English (United States)'], ['nl-NL', 'Dutch'], ['nl-BE', 'Dutch (Belgium)'],
  ['de-DE', 'German'], ['fr-FR', 'French'], ['es-ES', 'Spanish'], ['it-IT', 'Italian'],
]);

/** @param {Api.GetPhone} p the phone settings @param {string | null} workspaceZone */
function phoneCard(p, workspaceZone) {
  const el = h('div', {});
  const draw = (/** @type {Api.GetPhone} */ s, /** @type {string} */ savedNote) => {
    const ready = s.calls?.ready;
    replace(el,
      s.numbers?.length
        ? h('p', { class: ready ? 'ok-note' : 'notice', 'data-testid': 'phone-state' }, ready ? `Calls to ${s.numbers.join(', ')} are answered.` : `Numbers saved: ${s.numbers.join(', ')}. ${s.calls?.reason ?? ''}`)
        : h('p', { class: 'empty', 'data-testid': 'phone-state' }, 'No phone number yet: add the number your callers dial (the one you bought at Twilio) to answer calls.'),
      !ready && !s.numbers?.length && s.calls?.reason ? h('p', { class: 'notice' }, s.calls.reason) : null,
      h('h3', {}, 'Connect the number at Twilio'),
      h('p', {}, 'In Twilio, open your number, and under “A call comes in” choose Webhook, paste this address and choose HTTP POST.'),
      copyable('Address for Twilio (“A call comes in”)', s.voice_url, undefined, 'twilio-url'),
      localAddressNote(s.voice_url, 'the address for Twilio'),
      phoneForm(s, workspaceZone, (answer) => draw(answer, `Saved at ${when(answer.updated_at)}.`), savedNote));
  };
  draw(p, '');
  return el;
}

/**
 * @param {Api.GetPhone} p the phone settings @param {string | null} workspaceZone
 * @param {(answer: Api.PutPhone) => void} onSaved @param {string} savedNote
 */
function phoneForm(p, workspaceZone, onSaved, savedNote) {
  const zone = workspaceZone ?? browserTimeZone();
  const country = h('select', {}, h('option', { value: '' }, 'Choose…'), COUNTRIES.map(([code, name]) => h('option', { value: code }, `${name} (+${code})`)));
  country.value = COUNTRIES.find(([, , z]) => z === zone)?.[0] ?? '';
  const numbers = h('textarea', { rows: 3, spellcheck: 'false' });
  numbers.value = (p.numbers ?? []).join('\n');
  const transfer = h('input', { type: 'tel', value: p.transfer_number ?? '', autocomplete: 'off' });
  const language = h('select', {}, CALL_LANGUAGES.map(([tag, name]) => h('option', { value: tag }, name)));
  if (p.language && !CALL_LANGUAGES.some(([tag]) => tag === p.language)) language.append(h('option', { value: p.language }, p.language));
  language.value = p.language ?? 'en-GB';
  const greeting = h('textarea', { rows: 2 });
  greeting.value = p.greeting ?? '';
  const hours = teamHoursFields(p.team_hours, zone);
  const error = errorBox();
  const saved = h('p', { class: 'hint', role: 'status' }, savedNote);
  const button = h('button', { type: 'submit' }, 'Save phone settings');
  const form = h('form', { 'aria-label': 'Phone settings' },
    field('Country of your numbers', country, 'For numbers written the way you dial them at home, like 020 123 4567.'),
    field('Phone numbers, one per line', numbers, 'The numbers customers call, written any way you like: 020 123 4567, +31 20 123 4567 or 0031 20 123 4567.'),
    field('Transfer number (optional)', transfer, 'When a caller asks for a person while your team is available, the call is put through to this number.'),
    field('Language of calls', language, 'The language Botlink listens and speaks in on the phone.'),
    field('Greeting (optional)', greeting, 'Said first when a call is answered.'),
    hours.el,
    error.el, button, saved);
  /** @type {Array<[(f: string) => boolean, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement]>} */
  const controls = [[(f) => f.startsWith('numbers'), numbers], [(f) => f === 'transfer_number', transfer], [(f) => f === 'country', country], [(f) => f === 'language', language], [(f) => f === 'greeting', greeting], ...hours.controls];
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldErrors(controls.map(([, c]) => c));
    saved.textContent = '';
    const typos = hours.problems();
    if (typos.length) {
      showFieldErrors({ details: typos }, controls, error);
      return;
    }
    void busy(button, async () => {
      try {
        /** @type {Api.PutPhone} */
        const answer = await api('PUT', '/v1/phone', {
          body: {
            numbers: numbers.value.split(/\n|,/).map((n) => n.trim()).filter(Boolean),
            ...(country.value ? { country: country.value } : {}),
            transfer_number: transfer.value.trim() || null,
            team_hours: hours.value(),
            language: language.value,
            greeting: greeting.value.trim() || null,
          },
        });
        onSaved(answer);
      } catch (err) {
        showFieldErrors(err, controls, error);
      }
    });
  });
  return form;
}

/** @param {Api.GetWhatsapp | null} w the WhatsApp settings, null when none @param {Api.GetChannelsSetup} setup */
function whatsappCard(w, setup) {
  const el = h('div', {});
  const draw = (/** @type {Api.GetWhatsapp | null} */ v) => {
    const id = h('input', { type: 'text', value: v?.phone_number_id ?? '', required: true, autocomplete: 'off', inputmode: 'numeric' });
    const token = h('input', { type: 'password', required: true, autocomplete: 'off', spellcheck: 'false' });
    const error = errorBox();
    const button = h('button', { type: 'submit' }, v ? 'Replace' : 'Connect');
    const wa = setup.whatsapp;
    const form = h('form', { 'aria-label': 'WhatsApp settings' },
      field('Phone number ID', id, 'In your Meta app: WhatsApp, API Setup, under your business number.'),
      field('Access token', token, 'From the same page in Meta. Botlink keeps it encrypted and never shows it again.'),
      error.el, button);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      error.clear();
      clearFieldErrors([id, token]);
      void busy(button, async () => {
        try {
          /** @type {Api.PutWhatsapp} */
          const answer = await api('PUT', '/v1/whatsapp', { body: { phone_number_id: id.value.trim(), access_token: token.value } });
          draw(answer);
        } catch (err) {
          showFieldErrors(err, [[(f) => f === 'phone_number_id', id], [(f) => f === 'access_token', token]], error);
        }
      });
    });
    replace(el,
      v
        ? h('p', { class: 'ok-note', role: 'status' }, `Connected: business number ${v.phone_number_id}, access token ending ${v.token_hint}.`)
        : h('p', { class: 'empty', role: 'status' }, 'Not connected. Three steps: paste the two values below into your Meta app, then enter the number ID and access token from Meta here.'),
      wa.reason ? h('p', { class: 'notice', 'data-testid': 'whatsapp-reason' }, wa.reason) : null,
      h('h3', {}, 'In your Meta app: WhatsApp, Configuration, Webhook'),
      copyable('Callback URL', wa.callback_url, undefined, 'meta-callback'),
      localAddressNote(wa.callback_url, 'the callback URL for Meta'),
      wa.verify_token
        ? copyable('Verify token', wa.verify_token, 'Set by the person who runs this Botlink server; paste it into Meta as it is.', 'meta-verify-token')
        : h('p', { class: 'notice' }, 'The verify token is not set yet: the person who runs this Botlink server sets WHATSAPP_VERIFY_TOKEN, and it appears here.'),
      h('p', { class: 'hint' }, 'Then subscribe the webhook to “messages”.'),
      h('h3', {}, 'Your business number'),
      form);
  };
  draw(w);
  return el;
}

/** A time as people write it (9, 9.30, 9:30, 17) as HH:MM; anything else as typed, for the API to name. @param {string} t */
function clockTime(t) {
  const m = /^(\d{1,2})(?:[.:](\d{2}))?$/.exec(t.trim());
  return m ? `${String(m[1]).padStart(2, '0')}:${m[2] ?? '00'}` : t;
}

const DAYS = /** @type {const} */ ([['mon', 'Monday'], ['tue', 'Tuesday'], ['wed', 'Wednesday'], ['thu', 'Thursday'], ['fri', 'Friday'], ['sat', 'Saturday'], ['sun', 'Sunday']]);

/**
 * Team hours on the workspace's wall clock: a time zone and, per day, its ranges as `09:00-12:30, 13:30-17:30` (empty:
 * closed). All days empty: no team hours, the switch alone decides. The API names the field of each mistake
 * (`team_hours.week.mon.0.1`, …), shown under that day.
 * @param {Api.GetPhone['team_hours']} current the stored team hours, or null @param {string} zoneDefault
 */
function teamHoursFields(current, zoneDefault) {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const chosen = current?.time_zone ?? zoneDefault;
  const zone = h('select', {}, [...new Set([chosen, ...zones])].filter(Boolean).map((z) => h('option', { value: z }, z.replaceAll('_', ' '))));
  zone.value = chosen;
  /** @type {Record<string, HTMLInputElement>} */
  const days = {};
  for (const [key] of DAYS) {
    const ranges = current?.week?.[key] ?? [];
    days[key] = /** @type {HTMLInputElement} */ (h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'closed', value: ranges.map((r) => `${r[0]}-${r[1]}`).join(', ') }));
  }
  const el = h('fieldset', { class: 'hours' },
    h('legend', {}, 'Team hours (optional)'),
    h('p', { class: 'hint' }, 'When set, a caller who asks for a person is put through only within these hours (and while the team switch is on). Per day, times like 09:00-12:30, 13:30-17:30; leave a day empty when closed, and every day empty for no team hours.'),
    field('Time zone', zone, 'The hours are read on this clock.'),
    DAYS.map(([key, name]) => field(name, days[key])));
  /** @type {Array<[(f: string) => boolean, HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement]>} */
  const controls = [[(f) => f === 'team_hours.time_zone', zone], ...DAYS.map(([key]) => /** @type {[(f: string) => boolean, HTMLInputElement]} */ ([(f) => f.startsWith(`team_hours.week.${key}`), days[key]]))];
  return {
    el,
    controls,
    /** Times that are no time of day, said in words under their day (before anything is sent). */
    problems() {
      /** @type {{ field: string, message: string }[]} */
      const found = [];
      for (const [key] of DAYS) {
        for (const range of days[key].value.split(',').map((r) => r.trim()).filter(Boolean)) {
          const times = range.split(/\s*[-–]\s*/).map(clockTime);
          const bad = times.length !== 2 ? range : times.find((t) => !/^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/.test(t));
          if (bad !== undefined) found.push({ field: `team_hours.week.${key}`, message: `Write the hours like 09:00-17:30; “${bad}” is not a time of day from 00:00 to 24:00.` });
        }
      }
      return found;
    },
    /** The team_hours to send: null when no day has hours. */
    value() {
      /** @type {Record<string, string[][]>} */
      const week = {};
      for (const [key] of DAYS) {
        const ranges = days[key].value.split(',').map((r) => r.trim()).filter(Boolean).map((r) => r.split(/\s*[-–]\s*/).map(clockTime));
        if (ranges.length > 0) week[key] = ranges;
      }
      return Object.keys(week).length === 0 ? null : { time_zone: zone.value, week };
    },
  };
}
