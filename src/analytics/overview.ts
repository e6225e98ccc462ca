/**
 * The Overview's figures, series and unanswered questions (docs/analytics.md), read from the hourly roll-ups and
 * shaped as GET /v1/analytics/overview, /timeseries and /unanswered answer them.
 */
import type { AnalyticsRepository, Counters, LatencyRow } from '../../db/repositories/analytics.repository.ts';
import type { ConversationLabelsRepository } from '../../db/repositories/conversation-labels.repository.ts';
import { conversationLabel } from '../text/conversation-label.ts';
import { keywords, words } from '../text/words.ts';
import { CHANNELS } from '../channels-and-handoffs.ts';
import { addToHistogram, percentile, type Histogram } from './buckets.ts';
import type { AnalyticsPeriod } from './period.ts';

/** The newest this many unanswered messages of a period are grouped (docs/analytics.md). */
export const UNANSWERED_SCAN_LIMIT = 5000;
/** Questions answered, most asked first; conversations linked per question. */
export const UNANSWERED_QUESTIONS = 50;
export const UNANSWERED_SESSION_LINKS = 10;

const percentiles = (h: Histogram) => ({ p50: percentile(h, 0.5), p95: percentile(h, 0.95) });

function answeredBy(c: Counters) {
  return { integrator: c.by_integrator, knowledge_base: c.by_knowledge_base, ai: c.by_ai, fallback: c.by_fallback, agent: c.by_agent };
}

/** The endpoint's down periods clipped to the period: `{from, to}`, `to` null while it is still down. */
export function downPeriods(events: { kind: string; at: Date }[], from: Date, to: Date): { from: string; to: string | null }[] {
  const periods: { from: string; to: string | null }[] = [];
  let downSince: Date | null = null;
  const clip = (at: Date) => new Date(Math.max(at.getTime(), from.getTime())).toISOString();
  for (const e of events) {
    if (e.kind === 'endpoint_down' && downSince === null) downSince = e.at;
    else if (e.kind === 'endpoint_recovered' && downSince !== null) {
      if (e.at.getTime() > from.getTime()) periods.push({ from: clip(downSince), to: e.at.toISOString() });
      downSince = null;
    }
  }
  if (downSince !== null) periods.push({ from: clip(downSince), to: null });
  return periods.filter((p) => new Date(p.from).getTime() < to.getTime());
}

export async function overview(repo: AnalyticsRepository, workspaceId: string, period: AnalyticsPeriod) {
  const p = { workspaceId, ...period };
  const [c, latency, events] = await Promise.all([repo.totals(p), repo.latency(p), repo.endpointEvents(p)]);
  const histogram = (rows: LatencyRow[]) => {
    const h: Histogram = new Map();
    for (const r of rows) addToHistogram(h, r.bucket, r.n);
    return h;
  };
  const firstReply = latency.filter((r) => r.kind === 'first_reply');
  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    channel: period.channel,
    conversations: c.conversations,
    customer_messages: c.customer_messages,
    handed_over: c.handed_over,
    contained: Math.max(0, c.conversations - c.handed_over),
    answered_by: answeredBy(c),
    first_reply_ms: percentiles(histogram(firstReply)),
    first_reply_ms_by_channel: Object.fromEntries(
      CHANNELS.filter((ch) => period.channel === null || period.channel === ch)
        .map((ch) => [ch, percentiles(histogram(firstReply.filter((r) => r.channel === ch)))]),
    ),
    integrator: {
      requests: c.endpoint_requests,
      answers: c.endpoint_answers,
      no_answer: { timeout: c.no_answer_timeout, status: c.no_answer_status, invalid: c.no_answer_invalid, empty: c.no_answer_empty, down: c.no_answer_down },
      latency_ms: percentiles(histogram(latency.filter((r) => r.kind === 'endpoint'))),
      down_periods: downPeriods(events, period.from, period.to),
    },
  };
}

export async function timeseries(repo: AnalyticsRepository, workspaceId: string, period: AnalyticsPeriod, bucket: 'hour' | 'day', timeZone: string) {
  const p = { workspaceId, ...period };
  const [starts, rows, latency] = await Promise.all([
    repo.bucketStarts(p, bucket, timeZone),
    repo.series(p, bucket, timeZone),
    repo.seriesLatency(p, bucket, timeZone),
  ]);
  const key = (d: Date) => d.getTime();
  const byStart = new Map<number, { counters: Counters[]; channels: Record<string, number>; latency: Histogram }>();
  for (const s of starts) byStart.set(key(s), { counters: [], channels: Object.fromEntries(CHANNELS.map((ch) => [ch, 0])), latency: new Map() });
  for (const r of rows) {
    const b = byStart.get(key(r.start));
    if (!b) continue;
    b.counters.push(r);
    b.channels[r.channel] = (b.channels[r.channel] ?? 0) + r.conversations;
  }
  for (const r of latency) {
    const b = byStart.get(key(r.start));
    if (b) addToHistogram(b.latency, r.bucket, r.n);
  }
  const sum = (list: Counters[], name: keyof Counters) => list.reduce((n, c) => n + c[name], 0);
  return {
    bucket,
    time_zone: timeZone,
    buckets: starts.map((start) => {
      const b = byStart.get(key(start))!;
      const total = (name: keyof Counters) => sum(b.counters, name);
      return {
        start: start.toISOString(),
        conversations: total('conversations'),
        conversations_by_channel: b.channels,
        customer_messages: total('customer_messages'),
        handed_over: total('handed_over'),
        answered_by: { integrator: total('by_integrator'), knowledge_base: total('by_knowledge_base'), ai: total('by_ai'), fallback: total('by_fallback'), agent: total('by_agent') },
        integrator_latency_ms: percentiles(b.latency),
      };
    }),
  };
}

/**
 * The grouping rule (docs/analytics.md): a message's meaningful words (src/text/words.ts `keywords`: lowercase, accents
 * folded, stopwords of English and Dutch dropped), distinct and sorted; a message of stopwords only keeps all its words.
 * "Do you deliver to Belgium?" and "delivery belgium??" differ; "Belgium, do you deliver?" is the same question.
 */
export function questionKey(text: string): string {
  const meaningful = keywords(text);
  return (meaningful.length > 0 ? [...meaningful].sort() : words(text)).join(' ');
}

/**
 * The questions, most asked first, each with the conversations that asked it (`session_ids`) and those conversations
 * named (`sessions`, the same order: src/text/conversation-label.ts) for the links.
 */
export async function unanswered(
  repo: AnalyticsRepository,
  workspaceId: string,
  period: AnalyticsPeriod,
  labels: Pick<ConversationLabelsRepository, 'labelFacts'>,
) {
  const rows = await repo.unanswered({ workspaceId, ...period }, UNANSWERED_SCAN_LIMIT);
  const groups = new Map<string, { text: string; count: number; last_at: Date; session_ids: string[] }>();
  const seen = new Set<string>();
  // Newest first: the first wording seen of a question is its newest, shown as the question.
  for (const r of rows) {
    // A message answered by the fallback and then handed over is one unanswered message.
    if (seen.has(r.turn_id)) continue;
    seen.add(r.turn_id);
    const key = questionKey(r.customer_message);
    if (key === '') continue;
    const g = groups.get(key);
    if (!g) {
      groups.set(key, { text: r.customer_message, count: 1, last_at: r.at, session_ids: [r.session_id] });
      continue;
    }
    g.count += 1;
    if (!g.session_ids.includes(r.session_id) && g.session_ids.length < UNANSWERED_SESSION_LINKS) g.session_ids.push(r.session_id);
  }
  const questions = [...groups.values()]
    .sort((a, b) => b.count - a.count || b.last_at.getTime() - a.last_at.getTime())
    .slice(0, UNANSWERED_QUESTIONS)
    .map((g) => ({ text: g.text, count: g.count, last_at: g.last_at.toISOString(), session_ids: g.session_ids }));
  const facts = new Map((await labels.labelFacts(workspaceId, questions.flatMap((q) => q.session_ids))).map((f) => [f.id, f]));
  const named = questions.map((q) => ({
    ...q,
    sessions: q.session_ids.flatMap((id) => {
      const f = facts.get(id);
      return f ? [{ id, label: conversationLabel(f) }] : [];
    }),
  }));
  return { from: period.from.toISOString(), to: period.to.toISOString(), questions: named, complete: rows.length < UNANSWERED_SCAN_LIMIT };
}
