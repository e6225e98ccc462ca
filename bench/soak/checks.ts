/**
 * The soak's checks: nothing lost, nothing answered twice, nothing logged as an error. Everything is matched by id: a
 * phone answer carries its prompt's reference, a WhatsApp reply its message's token, a webhook its event's
 * conversation and webhook-id. With an engine killed midway, the calls on it are cut (a live call does not outlive
 * its process: counted, not an error), and the take-over is measured: how long after the kill the last message or
 * event that was acknowledged before it got its answer or delivery.
 */
import { openDatabase } from '../../db/database.ts';
import type { LogLine } from '../../harness/service-process.ts';
import type { CallersResults } from '../processes/phone-callers.ts';
import { seen, type Traffic } from './load.ts';

export interface Stored {
  events: { id: string }[];
  deliveriesNotSucceeded: number;
  inboundNotDone: number;
}

/** After the engines stopped: the outbox of our workspaces, and the WhatsApp messages' and deliveries' final states. */
export async function readStore(url: string | null, dataDir: string, workspaceIds: string[]): Promise<Stored> {
  const opened = url ? await openDatabase({ url, poolSize: 1 }) : await openDatabase({ dataDir });
  const { db } = opened;
  try {
    const events = await db.selectFrom('webhook_events').select(['id']).where('workspace_id', 'in', workspaceIds).where('event', '!=', 'test').execute();
    const deliveries = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', 'in', workspaceIds).where('status', '!=', 'succeeded').executeTakeFirstOrThrow();
    const inbound = await db.selectFrom('whatsapp_inbound_messages').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', 'in', workspaceIds).where('state', '!=', 'done').executeTakeFirstOrThrow();
    return { events, deliveriesNotSucceeded: Number(deliveries.n), inboundNotDone: Number(inbound.n) };
  } finally {
    await opened.close();
  }
}

/** Whatever the traffic is still owed: WhatsApp messages acknowledged and not answered, events not delivered. */
export function outstanding(traffic: Traffic): number {
  const delivered = new Set([...seen.deliveries.values()].map((d) => d.key));
  const unanswered = [...traffic.whatsapp.ackedAt.keys()].filter((t) => !seen.replies.has(t)).length;
  return unanswered + [...traffic.expectedEvents.keys()].filter((key) => !delivered.has(key)).length;
}

export interface Checked {
  errors: Record<string, number>;
  errorCount: number;
  lostWhatsapp: string[];
  undeliveredExpected: string[];
  repeatedDeliveries: number;
  repeatedReplies: number;
  errorLogs: LogLine[];
}

export function check(input: {
  traffic: Traffic;
  callers: CallersResults;
  connectErrors: number;
  dropped: number;
  stored: Stored;
  warnings: LogLine[];
  exitCodes: (number | null)[];
  settled: boolean;
  /** An engine was killed: dropped calls are the ones it held. */
  killed: boolean;
}): Checked {
  const { traffic: t, callers, stored } = input;
  const keysDelivered = new Set([...seen.deliveries.values()].map((d) => d.key));
  const lostWhatsapp = [...t.whatsapp.ackedAt.keys()].filter((token) => !seen.replies.has(token));
  const undeliveredExpected = [...t.expectedEvents.keys()].filter((key) => !keysDelivered.has(key));
  const undeliveredOutbox = stored.events.filter((e) => !seen.deliveries.has(e.id)).length;
  const repeatedDeliveries = seen.deliveryRequests - seen.deliveries.size;
  const repeatedReplies = [...seen.replies.values()].reduce((sum, n) => sum + n - 1, 0);
  const errorLogs = input.warnings.filter((w) => w.level >= 50);
  const errors: Record<string, number> = {
    phoneConnectErrors: input.connectErrors,
    phoneCallsDropped: input.killed ? 0 : input.dropped,
    phonePromptsUnanswered: callers.unanswered,
    phoneAnswersMismatched: callers.mismatched,
    phoneAnsweredTwice: callers.duplicates,
    whatsappRequestErrors: t.whatsapp.errors.length,
    whatsappAckedWithoutReply: lostWhatsapp.length,
    whatsappRepliedTwice: repeatedReplies,
    whatsappRepliesWithoutToken: seen.graphUnmatched,
    whatsappWrongAccessToken: seen.graphWrongToken,
    whatsappMessagesNotDone: stored.inboundNotDone,
    webchatErrors: t.webchat.errors.length,
    webhookEventsUndelivered: undeliveredExpected.length,
    outboxEventsUndelivered: undeliveredOutbox,
    webhookDeliveriesNotSucceeded: stored.deliveriesNotSucceeded,
    webhooksUnverified: seen.webhooksUnverified,
    integratorUnverified: seen.integratorUnverified,
    serviceErrorLogs: errorLogs.length,
    serviceExitCode: input.exitCodes.every((c) => c === 0) ? 0 : 1,
    notSettled: input.settled ? 0 : 1,
  };
  const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
  return { errors, errorCount, lostWhatsapp, undeliveredExpected, repeatedDeliveries, repeatedReplies, errorLogs };
}

/**
 * After a kill at `killAt` (performance.now()): among WhatsApp messages and webhook events acknowledged before the
 * kill and answered or delivered after it, the latest answer's time after the kill, s (null: none was pending).
 */
export interface TakeOver {
  whatsappSeconds: number | null;
  webhookSeconds: number | null;
  whatsappPending: number;
  webhooksPending: number;
}

export function takeOver(traffic: Traffic, killAt: number): TakeOver {
  const replies = [...traffic.whatsapp.ackedAt]
    .filter(([token, at]) => at < killAt && (seen.firstReplyAt.get(token) ?? Number.POSITIVE_INFINITY) > killAt)
    .map(([token]) => seen.firstReplyAt.get(token));
  const firstDelivery = new Map<string, number>();
  for (const d of seen.deliveries.values()) firstDelivery.set(d.key, Math.min(firstDelivery.get(d.key) ?? Number.POSITIVE_INFINITY, d.at));
  const deliveries = [...traffic.expectedEvents]
    .filter(([key, at]) => at < killAt && (firstDelivery.get(key) ?? Number.POSITIVE_INFINITY) > killAt)
    .map(([key]) => firstDelivery.get(key));
  const latest = (times: (number | undefined)[]) => {
    const done = times.filter((t): t is number => t !== undefined);
    return done.length === 0 ? null : Math.round((Math.max(...done) - killAt) / 100) / 10;
  };
  return { whatsappSeconds: latest(replies), webhookSeconds: latest(deliveries), whatsappPending: replies.length, webhooksPending: deliveries.length };
}
