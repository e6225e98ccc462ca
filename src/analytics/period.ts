/**
 * The period and channel of an Overview request (docs/analytics.md, "Periods"): `from` and `to` are ISO times, `to`
 * exclusive; the roll-ups count by the hour, so `from` is read at the whole UTC hour below it and `to` at the whole
 * hour above it: a period that ends now includes the current hour, and a period inside one hour is that hour. At most
 * 400 days; hour buckets for at most 31 days. Anything else is a clear 400 naming the field.
 */
import { AppError } from '../errors.ts';
import { CHANNELS, type Channel } from '../channels-and-handoffs.ts';

export const MAX_PERIOD_DAYS = 400;
export const MAX_HOURLY_DAYS = 31;
/** Without `from`: the seven days before `to`. */
export const DEFAULT_PERIOD_DAYS = 7;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface AnalyticsPeriod {
  from: Date;
  to: Date;
  channel: Channel | null;
}

function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', message, [{ field, message }]);
}

function time(query: Record<string, unknown>, field: 'from' | 'to'): Date | null {
  const value = query[field];
  if (value === undefined || value === '') return null;
  // An ISO 8601 date or date-time; Date.parse alone would also take "1" or "March 3".
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    throw invalid(field, `${field} must be an ISO 8601 time, like 2026-03-01T00:00:00Z.`);
  }
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid(field, `${field} is not a real time.`);
  return at;
}

const floorHour = (at: Date): Date => new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
const ceilHour = (at: Date): Date => new Date(Math.ceil(at.getTime() / HOUR_MS) * HOUR_MS);

/** Reads `from`, `to` and `channel`; `now` for the default `to` (the end of the current hour, so it is included). */
export function readPeriod(query: Record<string, unknown>, now: Date = new Date()): AnalyticsPeriod {
  const to = time(query, 'to') ?? ceilHour(now);
  const from = time(query, 'from') ?? new Date(to.getTime() - DEFAULT_PERIOD_DAYS * DAY_MS);
  if (from.getTime() >= to.getTime()) throw invalid('from', 'from must be before to.');
  if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * DAY_MS) throw invalid('to', `A period is at most ${MAX_PERIOD_DAYS} days.`);
  const channel = query.channel;
  if (channel !== undefined && channel !== '' && !(CHANNELS as readonly unknown[]).includes(channel)) {
    throw invalid('channel', `channel must be one of ${CHANNELS.join(', ')}.`);
  }
  return { from: floorHour(from), to: ceilHour(to), channel: channel ? (channel as Channel) : null };
}

/** `bucket`: hour or day (default: hour up to two days, day beyond). */
export function readBucket(query: Record<string, unknown>, period: AnalyticsPeriod): 'hour' | 'day' {
  const value = query.bucket;
  const days = (period.to.getTime() - period.from.getTime()) / DAY_MS;
  if (value === undefined || value === '') return days <= 2 ? 'hour' : 'day';
  if (value !== 'hour' && value !== 'day') throw invalid('bucket', 'bucket must be hour or day.');
  if (value === 'hour' && days > MAX_HOURLY_DAYS) throw invalid('bucket', `Hour buckets cover at most ${MAX_HOURLY_DAYS} days; use bucket=day.`);
  return value;
}
