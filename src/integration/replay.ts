/**
 * Replay (`POST /v1/integration/replay`, `npm run cli -- replay`, docs/integrators.md "Try a new version"): the last N
 * real customer messages of a workspace, read from its stored turns, are sent signed to a candidate endpoint (a staging
 * version, say), and each answer is shown beside what the live endpoint answered then.
 *
 * Choices, so a reader need not guess them:
 * - Which messages: completed turns of phone and WhatsApp sessions that asked the integrator (the turn has a bot-link
 *   summary, also one that says it was not configured or not waited for), newest first, at most
 *   {@link REPLAY_MAX_TURNS}. Website chats never reach the integrator (protocol §1.3), so they are not replayed.
 * - The request: the channel, language and customer phone as stored, `sent_at` now, and `session_id`
 *   `replay-<the session's id as the live endpoint knew it>`: the candidate can keep context within one conversation,
 *   and can never mistake a replay for the live conversation itself. One conversation's turns are sent one after the
 *   other in their order; {@link REPLAY_CONCURRENCY} conversations at a time. Each request has the engine's deadline of
 *   its channel (protocol §8: 3.5 s on the phone, 6 s on WhatsApp).
 * - Read-only: nothing is written to the conversations, and the live endpoint's health and metrics learn nothing
 *   (a client of its own, without metrics, and no health tracker).
 * - The key: the one given, else the workspace's current key.
 * - Limits, per workspace and per process: one replay at a time, at most {@link REPLAYS_PER_MINUTE} started per
 *   minute (429 with Retry-After).
 * - The judge (docs/integrators.md, "Judged replay"): with a model, each `changed` answer is labelled better, worse or
 *   equal by the workspace's model, against the knowledge the live turn had and the live answer, with its reason;
 *   `judge: false` leaves it out. The judging itself is the scenarios' judge's (src/scenarios/replay-judge.ts), given
 *   here as a dependency: it sits above this module.
 */
import { buildChannelRequest } from '../botlink/channel-request.ts';
import { createBotLinkClient } from '../botlink/client.ts';
import type { ResponseProblem } from '../botlink/channel-response.ts';
import { AppError } from '../errors.ts';
import type { GuardedClient } from '../net/guarded-client.ts';
import type { Handoff } from '../channels-and-handoffs.ts';
import { checkEndpointUrl, checkOwnKey } from './integration-service.ts';

/** The most turns one replay sends. */
export const REPLAY_MAX_TURNS = 200;
/** Conversations replayed at the same time. */
export const REPLAY_CONCURRENCY = 4;
/** Replays a workspace may start per minute (in one process). */
export const REPLAYS_PER_MINUTE = 3;
const REPLAY_WINDOW_MS = 60_000;
/** Retry-After, in seconds, while a replay of the workspace is running. */
const RUNNING_RETRY_AFTER_SECONDS = 10;

export const REPLAY_VERDICTS = ['same', 'changed', 'now_failing', 'now_answering', 'still_failing'] as const;
/** same: both answered alike; changed: both answered, differently; now_failing / now_answering: only live / only the candidate answered; still_failing: neither. */
export type ReplayVerdict = (typeof REPLAY_VERDICTS)[number];

/** How the judge rated a changed answer: the candidate's against the live one. */
export const REPLAY_LABELS = ['better', 'worse', 'equal'] as const;
export type ReplayLabel = (typeof REPLAY_LABELS)[number];
/** The judge's label with its reason, or why there is none ("could not judge"). */
export type ReplayJudgement = { label: ReplayLabel; reason: string } | { error: string };

/** What the judge of a changed answer reads: the message, both answers, and the live turn's stored knowledge. */
export interface ReplayChange {
  channel: 'phone' | 'whatsapp';
  language: string;
  message: string;
  live: ReplayAnswer;
  candidate: ReplayAnswer;
  /** The live turn's knowledge summary as stored (machines/session-types.ts, KnowledgeSummary), or null. */
  knowledge: unknown;
}

/** Judges changed answers (src/scenarios/replay-judge.ts); one judgement per change, in their order. Never throws. */
export interface ReplayJudge {
  judge(workspaceId: string, changes: readonly ReplayChange[]): Promise<ReplayJudgement[]>;
}

/** What the report says of the judge: whether it labelled the changed answers, and how many of each. */
export interface ReplayJudgeSummary {
  /** judged: the changed answers were labelled; off: `judge: false` was asked; needs_model: the service has no model. */
  status: 'judged' | 'off' | 'needs_model';
  /** Why nothing was labelled, in words; null when judged. */
  message: string | null;
  better: number;
  worse: number;
  equal: number;
  /** Changed answers without a label: the model failed or answered what could not be read (each item says why). */
  not_judged: number;
}

/** What one endpoint gave for a message: the fields a conversation acts on. */
export interface ReplayAnswer {
  outcome: 'answer' | 'no_answer';
  /** 'answer' or why not (status, timeout, not_configured, …). */
  reason: string;
  reply: string | null;
  handled: boolean | null;
  handoff: Handoff | null;
}

export interface ReplayItem {
  turn_id: string;
  session_id: string;
  channel: 'phone' | 'whatsapp';
  language: string;
  message: string;
  /** When the customer said it (the turn's start). */
  at: string;
  verdict: ReplayVerdict;
  live: ReplayAnswer;
  candidate: ReplayAnswer & { http_status: number | null; latency_ms: number; problems: ResponseProblem[] };
  /** For a `changed` answer the judge asked: its label and reason, or why it could not judge; otherwise null. */
  judge: ReplayJudgement | null;
}

export interface ReplayReport {
  endpoint_url: string;
  /** `last` as asked; `replayed` how many stored turns there were to send. */
  requested: number;
  replayed: number;
  summary: Record<ReplayVerdict, number>;
  /** The judge of the changed answers. */
  judge: ReplayJudgeSummary;
  /** Oldest first. */
  items: ReplayItem[];
}

/** A stored turn as the repository reads it (db/repositories/sessions.repository.ts, recentCustomerTurns). */
export interface StoredTurn {
  id: string;
  session_id: string;
  ordinal: number;
  language: string;
  customer_message: string;
  botlink: unknown;
  /** The live turn's knowledge search (what the judge reads beside the live answer). */
  knowledge: unknown;
  started_at: Date | string;
  channel: 'phone' | 'whatsapp' | 'webchat';
  external_id: string;
  customer_phone: string | null;
}

export interface ReplayDeps {
  turns: { recentCustomerTurns(workspaceId: string, limit: number): Promise<StoredTurn[]> };
  /** The workspace's current endpoint and key, for a replay without a key of its own. */
  credentials: (workspaceId: string) => Promise<{ endpointUrl: string; key: string } | undefined>;
  http: GuardedClient;
  /** The judge of changed answers; null when the service has no language model. */
  judge: ReplayJudge | null;
  /** Why there is no judge, as the report says it (the judge's own words, src/scenarios/judge.ts). */
  needsModel: string;
  /** The clock of the rate limit, ms; default Date.now. */
  now?: () => number;
}

export function createReplayService(deps: ReplayDeps) {
  const now = deps.now ?? Date.now;
  // Its own client without metrics: replayed traffic is not the live endpoint's (nor the health tracker's).
  const botlink = createBotLinkClient({ http: deps.http });
  const running = new Set<string>();
  const started = new Map<string, number[]>();

  /** Claims the workspace's replay slot, or throws 429; synchronous, so two requests cannot both pass. */
  function claim(workspaceId: string): void {
    if (running.has(workspaceId)) {
      throw new AppError('rate_limited', 'A replay of this workspace is already running; wait for it to finish.', { retry_after: RUNNING_RETRY_AFTER_SECONDS });
    }
    const t = now();
    const recent = (started.get(workspaceId) ?? []).filter((at) => t - at < REPLAY_WINDOW_MS);
    started.set(workspaceId, recent);
    if (recent.length >= REPLAYS_PER_MINUTE) {
      const wait = Math.max(1, Math.ceil((recent[0]! + REPLAY_WINDOW_MS - t) / 1000));
      throw new AppError('rate_limited', `At most ${REPLAYS_PER_MINUTE} replays a minute; try again in ${wait} s.`, { retry_after: wait });
    }
    running.add(workspaceId);
  }

  return {
    async replay(workspaceId: string, input: { endpoint_url: string; key?: string; last: number; judge?: boolean }): Promise<ReplayReport> {
      claim(workspaceId);
      try {
        const endpointUrl = await checkEndpointUrl(deps.http, input.endpoint_url);
        const key = input.key === undefined ? (await deps.credentials(workspaceId))?.key : checkOwnKey(input.key);
        if (key === undefined) {
          throw new AppError('invalid_key', 'key is required: the workspace has no integration whose key could be used.', [{ field: 'key', message: 'is required: the workspace has no integration whose key could be used' }]);
        }
        // Only a replay that really starts counts toward the minute's budget.
        started.set(workspaceId, [...(started.get(workspaceId) ?? []), now()]);
        const last = Math.min(REPLAY_MAX_TURNS, Math.max(1, Math.floor(input.last)));
        const turns = (await deps.turns.recentCustomerTurns(workspaceId, last)).filter(
          (t): t is StoredTurn & { channel: 'phone' | 'whatsapp' } => t.channel === 'phone' || t.channel === 'whatsapp',
        );
        const items = await replayTurns(turns, (turn) => replayOne(turn, endpointUrl, key));
        const summary = Object.fromEntries(REPLAY_VERDICTS.map((v) => [v, 0])) as Record<ReplayVerdict, number>;
        for (const item of items) summary[item.verdict] += 1;
        const judge = await judgeChanged(workspaceId, input.judge ?? true, items, new Map(turns.map((t) => [t.id, t.knowledge])));
        return { endpoint_url: endpointUrl, requested: input.last, replayed: items.length, summary, judge, items };
      } finally {
        running.delete(workspaceId);
      }
    },
  };

  /** Labels the changed items in place (their `judge`), and answers the count of each label. */
  async function judgeChanged(workspaceId: string, wanted: boolean, items: ReplayItem[], knowledge: Map<string, unknown>): Promise<ReplayJudgeSummary> {
    const counts = { better: 0, worse: 0, equal: 0, not_judged: 0 };
    const judge = wanted ? deps.judge : null;
    if (!wanted) return { status: 'off', message: 'the replay asked for no judge (--no-judge, or judge: false in the API)', ...counts };
    if (judge === null) return { status: 'needs_model', message: deps.needsModel, ...counts };
    const changed = items.filter((item) => item.verdict === 'changed');
    const judgements = changed.length === 0 ? [] : await judge.judge(workspaceId, changed.map((item) => ({
      channel: item.channel,
      language: item.language,
      message: item.message,
      live: item.live,
      candidate: item.candidate,
      knowledge: knowledge.get(item.turn_id) ?? null,
    })));
    changed.forEach((item, i) => {
      const judgement = judgements[i] ?? { error: 'the judge gave no judgement on this answer' };
      item.judge = judgement;
      if ('error' in judgement) counts.not_judged += 1;
      else counts[judgement.label] += 1;
    });
    return { status: 'judged', message: null, ...counts };
  }

  async function replayOne(turn: StoredTurn & { channel: 'phone' | 'whatsapp' }, endpointUrl: string, key: string): Promise<ReplayItem> {
    const request = buildChannelRequest({
      channel: turn.channel,
      conversationId: `replay-${turn.external_id}`,
      message: turn.customer_message,
      language: turn.language,
      customerPhone: turn.customer_phone,
    });
    const exchange = await botlink.send({ endpointUrl, key, request });
    const { outcome } = exchange;
    const candidate: ReplayItem['candidate'] = {
      ...(outcome.outcome === 'answer'
        ? { outcome: 'answer', reason: 'answer', reply: outcome.answer.reply, handled: outcome.answer.handled, handoff: outcome.answer.handoff }
        : { outcome: 'no_answer', reason: outcome.reason, reply: null, handled: null, handoff: null }),
      http_status: exchange.httpStatus,
      latency_ms: Math.round(exchange.latencyMs),
      problems: outcome.problems,
    };
    const live = liveAnswer(turn.botlink);
    return {
      turn_id: turn.id,
      session_id: turn.session_id,
      channel: turn.channel,
      language: turn.language,
      message: turn.customer_message,
      at: new Date(turn.started_at).toISOString(),
      verdict: verdictOf(live, candidate),
      live,
      candidate,
      judge: null,
    };
  }
}

export type ReplayService = ReturnType<typeof createReplayService>;

/**
 * Sends each conversation's turns in their order, {@link REPLAY_CONCURRENCY} conversations at a time; the items come
 * back oldest first. `turns` is newest first, as stored turns are read.
 */
async function replayTurns<T extends StoredTurn>(turns: T[], send: (turn: T) => Promise<ReplayItem>): Promise<ReplayItem[]> {
  const chronological = [...turns].reverse();
  const bySession = new Map<string, T[]>();
  for (const turn of chronological) {
    const list = bySession.get(turn.session_id);
    if (list) list.push(turn);
    else bySession.set(turn.session_id, [turn]);
  }
  const results = new Map<string, ReplayItem>();
  const queue = [...bySession.values()];
  const worker = async (): Promise<void> => {
    for (let conversation = queue.shift(); conversation; conversation = queue.shift()) {
      for (const turn of conversation) results.set(turn.id, await send(turn));
    }
  };
  await Promise.all(Array.from({ length: Math.min(REPLAY_CONCURRENCY, queue.length) }, worker));
  return chronological.map((t) => results.get(t.id)!);
}

/** The live answer from the turn's bot-link summary (machines/session-types.ts, BotLinkSummary). */
function liveAnswer(stored: unknown): ReplayAnswer {
  const summary = (typeof stored === 'string' ? (JSON.parse(stored) as unknown) : stored) as Record<string, unknown> | null;
  const answered = summary?.outcome === 'answer';
  const handoff = summary?.handoff;
  return {
    outcome: answered ? 'answer' : 'no_answer',
    reason: typeof summary?.reason === 'string' ? summary.reason : answered ? 'answer' : 'unknown',
    reply: answered && typeof summary?.reply === 'string' ? summary.reply : null,
    handled: answered && typeof summary?.handled === 'boolean' ? summary.handled : null,
    handoff: answered && (handoff === 'human' || handoff === 'forward') ? handoff : null,
  };
}

function verdictOf(live: ReplayAnswer, candidate: ReplayAnswer): ReplayVerdict {
  const liveAnswered = live.outcome === 'answer';
  const candidateAnswered = candidate.outcome === 'answer';
  if (liveAnswered && candidateAnswered) {
    return live.reply === candidate.reply && live.handled === candidate.handled && live.handoff === candidate.handoff ? 'same' : 'changed';
  }
  if (liveAnswered) return 'now_failing';
  return candidateAnswered ? 'now_answering' : 'still_failing';
}

/** The report as the CLI prints it: each message with both answers, then the count per verdict. */
export function replayLines(report: ReplayReport): string[] {
  const shown = (a: ReplayAnswer): string =>
    a.outcome === 'answer' ? `${JSON.stringify(a.reply)}${a.handled === false ? ' (handled: false)' : ''}${a.handoff ? ` (handoff: ${a.handoff})` : ''}` : `no answer (${a.reason})`;
  const lines: string[] = [];
  for (const item of report.items) {
    lines.push(`${item.verdict.padEnd(13)} ${item.at} ${item.channel.padEnd(8)} ${JSON.stringify(item.message)}`);
    if (item.verdict !== 'same') {
      lines.push(`    live:      ${shown(item.live)}`);
      lines.push(`    candidate: ${shown(item.candidate)}`);
    }
    if (item.judge) lines.push(`    judged:    ${'error' in item.judge ? `could not judge (${item.judge.error})` : `${item.judge.label}: ${item.judge.reason}`}`);
  }
  lines.push(`${report.replayed} replayed to ${report.endpoint_url}: ${REPLAY_VERDICTS.map((v) => `${report.summary[v]} ${v}`).join(', ')}`);
  lines.push(judgeLine(report.judge));
  return lines;
}

/** The judge's line of the report: how many changed answers got worse, better or stayed equal; or why none was judged. */
export function judgeLine(judge: ReplayJudgeSummary): string {
  if (judge.status !== 'judged') return `changed answers not judged: ${judge.message}`;
  const total = judge.better + judge.worse + judge.equal + judge.not_judged;
  if (total === 0) return 'changed answers judged: none changed';
  return `changed answers judged: ${judge.worse} worse, ${judge.better} better, ${judge.equal} equal${judge.not_judged ? `, ${judge.not_judged} could not be judged` : ''}`;
}
