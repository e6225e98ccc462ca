/**
 * The soak's report: per engine, its memory over time (does anything grow), its event loop, its CPU per turn and the
 * phone answers' overhead beyond the integrator on the calls it held; for the whole deployment, the load as it ran,
 * the counts, the take-over after a kill, and the errors. Printed as a table and written as JSON
 * (bench/results/soak-<database>[-<n>-engines].json with --record).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { textTable } from '../lib/benchmark.ts';
import { round, summarize } from '../lib/stats.ts';
import type { ProbeSample, ProbeSummary } from '../processes/soak-probe.ts';
import type { CallersResults } from '../processes/phone-callers.ts';
import type { Checked, TakeOver } from './checks.ts';
import { LOAD, seen, type Traffic } from './load.ts';

export interface Sample {
  atSeconds: number;
  rssMiB: number;
  heapUsedMiB: number;
  heapAfterGcMiB: number | null;
  loopP99Ms: number;
  loopMaxMs: number;
}

export const mib = (bytes: number) => round(bytes / 2 ** 20, 1);

export function toSample(s: ProbeSample, atSeconds: number): Sample {
  return {
    atSeconds,
    rssMiB: mib(s.rss),
    heapUsedMiB: mib(s.heapUsed),
    heapAfterGcMiB: s.heapAfterGc === null ? null : mib(s.heapAfterGc),
    loopP99Ms: round(s.loopP99 / 1e6, 2),
    loopMaxMs: round(s.loopMax / 1e6, 2),
  };
}

/** What the run measured of one engine slot (a killed engine's slot covers its restarted process too). */
export interface EngineFigures {
  name: string;
  samples: Sample[];
  loop: ProbeSummary | null;
  cpuMicros: number;
  killedAtSeconds: number | null;
}

function pct(values: number[]): { p50: number; p99: number; max: number } {
  const s = summarize(Float64Array.from(values));
  return { p50: round(s.p50, 1), p99: round(s.p99, 1), max: round(s.max, 1) };
}

/** Least-squares slope of (seconds, MiB) points, in MiB per minute; null with fewer than 3 points. */
function slope(points: [number, number][]): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  return sxx === 0 ? null : round((sxy / sxx) * 60, 2);
}

const median = (values: number[]) => (values.length === 0 ? Number.NaN : [...values].sort((a, b) => a - b)[values.length >> 1]!);

function memoryOf(samples: Sample[], trafficSeconds: number) {
  const during = samples.filter((s) => s.atSeconds > 0 && s.atSeconds <= trafficSeconds);
  const secondHalf = during.filter((s) => s.atSeconds >= trafficSeconds / 2);
  const gc = samples.filter((s) => s.heapAfterGcMiB !== null && s.atSeconds <= trafficSeconds);
  const gcSecondHalf = gc.filter((s) => s.atSeconds >= trafficSeconds / 2);
  return {
    rssMiB: {
      start: samples[0]?.rssMiB,
      plateau: median(secondHalf.map((s) => s.rssMiB)),
      end: during.at(-1)?.rssMiB,
      peak: Math.max(...samples.map((s) => s.rssMiB)),
      slopeSecondHalfPerMinute: slope(secondHalf.map((s) => [s.atSeconds, s.rssMiB])),
    },
    heapAfterGcMiB: {
      start: gc[0]?.heapAfterGcMiB,
      plateau: median(gcSecondHalf.map((s) => s.heapAfterGcMiB!)),
      end: gc.at(-1)?.heapAfterGcMiB,
      slopeSecondHalfPerMinute: slope(gcSecondHalf.map((s) => [s.atSeconds, s.heapAfterGcMiB!])),
    },
    worstWindowLoopP99Ms: Math.max(0, ...during.map((s) => s.loopP99Ms)),
  };
}

export interface ReportInput {
  database: string;
  describe: string;
  engines: EngineFigures[];
  callers: CallersResults;
  calls: number;
  traffic: Traffic;
  trafficSeconds: number;
  seconds: number;
  checked: Checked;
  takeOver: TakeOver | null;
  stored: { events: unknown[] };
}

export function buildReport(input: ReportInput) {
  const { callers: results, traffic: t, checked, trafficSeconds } = input;
  const engineCount = input.engines.length;
  const whatsappTurns = t.whatsapp.acked - checked.lostWhatsapp.length;
  const perEngine = input.engines.map((e) => {
    const calls = Object.entries(results.engineOfCall).filter(([, name]) => name === e.name).map(([call]) => call);
    const mine = new Set(calls);
    const overhead = results.ids.flatMap((id, i) => (engineCount === 1 || mine.has(id.split(':')[0]!) ? [results.totalsMs[i]! - LOAD.integratorMs] : []));
    const phoneTurns = overhead.length;
    const chatTurns = engineCount === 1 ? t.webchat.answered : (t.chatTurnsByEngine.get(e.name) ?? 0);
    // WhatsApp turns are claimed by whichever engine's worker is free: counted here as an even share of them.
    const turns = phoneTurns + chatTurns + whatsappTurns / engineCount;
    const o = pct(overhead);
    return {
      name: e.name,
      killedAtSeconds: e.killedAtSeconds,
      calls: engineCount === 1 ? input.calls : calls.length,
      phoneTurns,
      chatTurns,
      overheadMs: o,
      cpuPercentOfCore: trafficSeconds > 0 ? Math.round(e.cpuMicros / 1e4 / trafficSeconds) : 0,
      cpuPerTurnUs: turns > 0 ? Math.round(e.cpuMicros / turns) : null,
      eventLoopMs: { p50: round((e.loop?.loopP50 ?? 0) / 1e6, 2), p99: round((e.loop?.loopP99 ?? 0) / 1e6, 2), max: round((e.loop?.loopMax ?? 0) / 1e6, 2) },
      memory: memoryOf(e.samples, trafficSeconds),
    };
  });
  const replyMs = [...t.whatsapp.ackedAt].filter(([token]) => seen.firstReplyAt.has(token)).map(([token, at]) => seen.firstReplyAt.get(token)! - at);
  const counts = {
    phone: {
      prompts: results.prompts,
      answered: results.answered,
      unanswered: results.unanswered,
      cutByKill: results.cut,
      mismatched: results.mismatched,
      duplicates: results.duplicates,
    },
    whatsapp: {
      sent: t.whatsapp.sent,
      acked: t.whatsapp.acked,
      /** Deliveries sent again after a refusal (an engine killed with them in flight), as Meta sends them again. */
      retried: t.whatsapp.retried,
      refused: t.whatsapp.errors.slice(0, 20),
      replied: whatsappTurns,
      lost: checked.lostWhatsapp.length,
      repeatedReplies: checked.repeatedReplies,
      ackMs: pct(t.whatsapp.ackMs),
      ackToReplyMs: pct(replyMs),
    },
    webchat: {
      conversations: t.webchat.conversations,
      answered: t.webchat.answered,
      leads: t.webchat.leads,
      escalations: t.webchat.escalations,
      replyMs: pct(t.webchat.replyMs),
      errors: t.webchat.errors.slice(0, 20),
    },
    webhooks: {
      expected: t.expectedEvents.size,
      outboxEvents: input.stored.events.length,
      delivered: seen.deliveries.size,
      undelivered: checked.undeliveredExpected.length,
      repeatedDeliveries: checked.repeatedDeliveries,
    },
  };
  const load = {
    seconds: round(trafficSeconds, 1),
    calls: input.calls,
    phoneTurnsPerSecond: round(results.prompts / input.seconds, 1),
    whatsappPerSecond: round(t.whatsapp.sent / input.seconds, 1),
    webchatConversationsPerSecond: round(t.webchat.conversations / input.seconds, 1),
    webhookEventsPerSecond: round(t.expectedEvents.size / input.seconds, 1),
    integratorMs: LOAD.integratorMs,
  };
  return { perEngine, counts, load };
}

export type Report = ReturnType<typeof buildReport>;

export function printReport(input: ReportInput, report: Report): void {
  const { counts, load, perEngine } = report;
  const f = (v: number | null | undefined) => (v === null || v === undefined || Number.isNaN(v) ? '–' : String(v));
  const rows: string[][] = [
    ['traffic, s', f(load.seconds)],
    ['phone: calls / turns per s', `${load.calls} / ${load.phoneTurnsPerSecond}`],
    ['WhatsApp messages per s / website chats per s / webhook events per s', `${load.whatsappPerSecond} / ${load.webchatConversationsPerSecond} / ${load.webhookEventsPerSecond}`],
    ['phone prompts answered / sent (matched by reference); cut by the kill', `${counts.phone.answered} / ${counts.phone.prompts}; ${counts.phone.cutByKill}`],
    ['WhatsApp replied / acknowledged / sent (matched by token); deliveries retried', `${counts.whatsapp.replied} / ${counts.whatsapp.acked} / ${counts.whatsapp.sent}; ${counts.whatsapp.retried}`],
    ['WhatsApp 200 → reply at the Graph API p50 / p99, ms', `${counts.whatsapp.ackToReplyMs.p50} / ${counts.whatsapp.ackToReplyMs.p99}`],
    ['website chats answered / started', `${counts.webchat.answered} / ${counts.webchat.conversations}`],
    ['webhook events delivered / expected (outbox rows)', `${counts.webhooks.expected - counts.webhooks.undelivered} / ${counts.webhooks.expected} (${counts.webhooks.outboxEvents})`],
    ['answered twice: phone / WhatsApp / webhook deliveries repeated', `${counts.phone.duplicates} / ${counts.whatsapp.repeatedReplies} / ${counts.webhooks.repeatedDeliveries}`],
    ...(input.takeOver
      ? [
          ['take-over after the kill: last WhatsApp reply / last webhook delivery, s', `${f(input.takeOver.whatsappSeconds)} / ${f(input.takeOver.webhookSeconds)}`],
          ['  pending at the kill: WhatsApp messages / webhook events', `${input.takeOver.whatsappPending} / ${input.takeOver.webhooksPending}`],
        ]
      : []),
    ['errors', String(input.checked.errorCount)],
  ];
  console.log(`\n${textTable(['soak', input.describe.slice(0, 60)], rows)}\n`);
  const engineRows = perEngine.map((e) => [
    `${e.name}${e.killedAtSeconds === null ? '' : ` (killed at ${e.killedAtSeconds} s)`}`,
    String(e.calls),
    `${e.overheadMs.p50} / ${e.overheadMs.p99}`,
    String(e.cpuPercentOfCore),
    f(e.cpuPerTurnUs),
    `${e.eventLoopMs.p99} / ${e.eventLoopMs.max}`,
    `${f(e.memory.rssMiB.start)} / ${f(e.memory.rssMiB.plateau)} / ${f(e.memory.rssMiB.peak)}`,
    f(e.memory.heapAfterGcMiB.slopeSecondHalfPerMinute),
  ]);
  console.log(textTable(['engine', 'calls', 'overhead p50 / p99 ms', 'CPU %', 'CPU/turn µs', 'loop p99 / max ms', 'RSS start/plateau/peak MiB', 'heap-after-GC MiB/min'], engineRows));
  if (input.checked.errorCount > 0) console.log(`\nERRORS: ${JSON.stringify(Object.fromEntries(Object.entries(input.checked.errors).filter(([, v]) => v > 0)))}`);
}

export function writeReport(folder: string, fileName: string, output: object): string {
  mkdirSync(folder, { recursive: true });
  const file = join(folder, fileName);
  writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
  return file;
}
