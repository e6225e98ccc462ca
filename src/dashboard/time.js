// @ts-check
/**
 * Every time and date the dashboard shows, in one place: in the workspace's time zone (GET /v1/workspace `time_zone`,
 * read at sign-in and kept with the session; the browser's own zone while none is chosen) and in the browser's
 * language, whatever the zone of the computer it is read on (docs/interfaces.md, "Going live"). A customer's own
 * local time (the customer panel) names its zone itself.
 */

/** @type {Map<string, Intl.DateTimeFormat>} */
const formats = new Map();

/** The zone this browser runs in. */
export function browserTimeZone() {
  return new Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** Whether the browser knows `zone` as an IANA time zone. @param {unknown} zone @returns {zone is string} */
export function isTimeZone(zone) {
  if (typeof zone !== 'string' || zone === '') return false;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

let zone = browserTimeZone();

/** The zone times are shown in now. */
export function timeZone() {
  return zone;
}

/**
 * Shows times in this zone from now on: the workspace's, when signing in and when an owner changes it; null (none
 * chosen yet) or one the browser does not know: the browser's.
 * @param {string | null | undefined} workspaceZone
 */
export function setTimeZone(workspaceZone) {
  zone = isTimeZone(workspaceZone) ? workspaceZone : browserTimeZone();
}

/**
 * `at` written with `options` in the browser's language, in the workspace's zone unless `options.timeZone` names
 * another (a customer's own clock).
 * @param {Date | number | string} at @param {Intl.DateTimeFormatOptions} options
 */
export function formatTime(at, options) {
  const d = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(d.getTime())) return typeof at === 'string' ? at : '—';
  const withZone = { ...options, timeZone: options.timeZone ?? zone };
  const key = JSON.stringify(withZone);
  let format = formats.get(key);
  if (!format) formats.set(key, (format = new Intl.DateTimeFormat(undefined, withZone)));
  return format.format(d);
}

/** Date and time of an ISO string ("12 Mar 2025, 15:23" as the browser's language writes it); "—" for none. @param {string | null | undefined} iso */
export function when(iso) {
  if (!iso) return '—';
  return formatTime(iso, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The time of day with seconds ("15:23:41"): when a page last read something. @param {Date} [at] */
export function clock(at = new Date()) {
  return formatTime(at, { timeStyle: 'medium' });
}

/** The time of day, and the date too unless it is today (in the workspace's zone). @param {string | null | undefined} iso */
export function shortWhen(iso) {
  if (!iso) return '—';
  const day = (/** @type {Date | string} */ at) => formatTime(at, { year: 'numeric', month: '2-digit', day: '2-digit' });
  const time = formatTime(iso, { hour: '2-digit', minute: '2-digit' });
  return day(iso) === day(new Date()) ? time : `${formatTime(iso, { dateStyle: 'medium' })} ${time}`;
}

/**
 * The instant a day starts in the workspace's zone: "2025-03-09" → midnight there (a date input's value is a day of
 * the shop's calendar, not of the computer's).
 * @param {string} day YYYY-MM-DD
 */
export function dayStart(day) {
  const [y, m, d] = day.split('-').map(Number);
  const guess = Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 1);
  // The zone's offset at that moment, read back from how the zone writes it; twice, for a day that starts near a change.
  let at = guess - offsetAt(guess);
  at = guess - offsetAt(at);
  return new Date(at);
}

/** How far the workspace's zone is ahead of UTC at `ms`, in milliseconds. @param {number} ms */
function offsetAt(ms) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, Number(p.value)]),
  );
  const asUtc = Date.UTC(parts.year ?? 1970, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0);
  return asUtc - Math.floor(ms / 1000) * 1000;
}
