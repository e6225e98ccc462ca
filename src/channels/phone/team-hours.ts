/**
 * Team hours: the weekly opening ranges of the team in one IANA time zone, for example
 *
 *   { time_zone: 'Europe/Amsterdam', week: { mon: [['09:00', '17:30']], sat: [['10:00', '14:00']] } }
 *
 * A weekday that is missing or has no ranges is closed. A range runs from its start up to, not including, its end,
 * in the zone's wall-clock time (so it follows daylight saving time). '24:00' may end a range; a range that would
 * cross midnight is written as two (mon ['22:00','24:00'] and tue ['00:00','02:00']).
 */
import { TEAM_HOURS_MAX_RANGES_PER_DAY } from './limits.ts';

export const weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof weekdays)[number];

export interface TeamHours {
  time_zone: string;
  week: Partial<Record<Weekday, Array<[string, string]>>>;
}

/**
 * The JSON Schema of team_hours for the route declaration: the shape and each time (00:00 to 24:00); the zone and the
 * order of a range's times are checked by `teamHoursProblems`.
 */
export const teamHoursSchema = {
  type: 'object',
  required: ['time_zone', 'week'],
  additionalProperties: false,
  properties: {
    time_zone: { type: 'string', minLength: 1, maxLength: 64, description: "An IANA time zone, like 'Europe/Amsterdam'.", examples: ['Europe/Amsterdam', 'UTC', 'America/New_York'] },
    week: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        weekdays.map((d) => [
          d,
          {
            type: 'array',
            maxItems: TEAM_HOURS_MAX_RANGES_PER_DAY,
            items: { type: 'array', minItems: 2, maxItems: 2, items: { type: 'string', pattern: '^(?:(?:[01][0-9]|2[0-3]):[0-5][0-9]|24:00)$' } },
          },
        ]),
      ),
    },
  },
} as const;

const TIME = /^([01][0-9]|2[0-4]):([0-5][0-9])$/;
/** IANA names are Area/Location words (and a few single words like UTC); offsets like '+01:00' are not zones. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

function minutes(time: string): number | null {
  const m = TIME.exec(time);
  if (!m) return null;
  const value = Number(m[1]) * 60 + Number(m[2]);
  return value > 24 * 60 ? null : value;
}

/** Whether Intl knows the zone (the IANA database Node ships). */
export function isTimeZone(zone: string): boolean {
  if (!ZONE_NAME.test(zone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Problems with team hours whose shape the schema already checked: each names its field. Empty when valid. */
export function teamHoursProblems(hours: TeamHours, field = 'team_hours'): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = [];
  if (!isTimeZone(hours.time_zone)) problems.push({ field: `${field}.time_zone`, message: `is not an IANA time zone (like 'Europe/Amsterdam')` });
  for (const day of weekdays) {
    for (const [i, range] of (hours.week[day] ?? []).entries()) {
      const [start, end] = range.map(minutes);
      if (start == null || start >= 24 * 60) problems.push({ field: `${field}.week.${day}.${i}.0`, message: 'must be a time from 00:00 to 23:59' });
      else if (end == null) problems.push({ field: `${field}.week.${day}.${i}.1`, message: 'must be a time from 00:01 to 24:00' });
      else if (end <= start) problems.push({ field: `${field}.week.${day}.${i}`, message: 'must end after it starts (split a range over midnight in two)' });
    }
  }
  return problems;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    // Zones come from workspace settings; a bounded cache keeps a flood of them from growing memory.
    if (formatters.size >= 256) formatters.clear();
    formatters.set(zone, f);
  }
  return f;
}

/** The weekday and minute of the day at `at` on the wall clock of `zone`. */
export function wallClock(at: Date, zone: string): { day: Weekday; minute: number } {
  let day: Weekday = 'mon';
  let hour = 0;
  let minute = 0;
  for (const part of formatter(zone).formatToParts(at)) {
    if (part.type === 'weekday') day = part.value.slice(0, 3).toLowerCase() as Weekday;
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { day, minute: (hour % 24) * 60 + minute };
}

/** Whether `at` falls inside the team hours. */
export function withinTeamHours(hours: TeamHours, at: Date): boolean {
  const { day, minute } = wallClock(at, hours.time_zone);
  return (hours.week[day] ?? []).some(([start, end]) => {
    const s = minutes(start);
    const e = minutes(end);
    return s != null && e != null && minute >= s && minute < e;
  });
}

/** When the team hours open next: the weekday and wall-clock time of the next range's start, and whether that is today. */
export interface TeamOpening {
  day: Weekday;
  time: string;
  today: boolean;
}

/** The next start of a range after `at` within a week, in the zone's wall-clock time; null when the week has no ranges. */
export function nextOpening(hours: TeamHours, at: Date): TeamOpening | null {
  const { day, minute } = wallClock(at, hours.time_zone);
  const first = weekdays.indexOf(day);
  for (let offset = 0; offset <= 7; offset++) {
    const d = weekdays[(first + offset) % 7]!;
    const starts = (hours.week[d] ?? [])
      .map(([start]) => ({ start, m: minutes(start) }))
      .filter((r): r is { start: string; m: number } => r.m != null && (offset > 0 || r.m > minute))
      .sort((a, b) => a.m - b.m);
    if (starts.length > 0) return { day: d, time: starts[0]!.start, today: offset === 0 };
  }
  return null;
}
