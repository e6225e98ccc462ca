/**
 * One customer's data in a workspace (docs/privacy.md, "Export and erasure"): found by phone number, WhatsApp id or
 * email wherever the service keeps it, exported as one JSON document, or erased everywhere in one transaction.
 *
 * A phone number and a WhatsApp id are the same person's digits (a WhatsApp id is the number without `+`), so either
 * finds the phone calls, the WhatsApp conversations and the web chat leads that gave that number.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import { readPhoneNumber } from '../channels/phone/phone-number.ts';
import { AppError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { EXPORT_MAX_CONVERSATIONS } from './limits.ts';

export type CustomerKey = { phone: string } | { email: string } | { whatsapp_id: string };

interface Match {
  /** The digits of a phone number or WhatsApp id; null when searching by email. */
  digits: string | null;
  email: string | null;
}

export interface CustomerDataDeps {
  db: Db;
  logger: Logger;
  /** Stops this engine's actor of a conversation before it is erased, so it writes nothing afterwards. */
  endConversation?: (session: { workspaceId: string; channel: 'phone' | 'whatsapp' | 'webchat'; externalId: string }) => Promise<void>;
}

export type CustomerData = ReturnType<typeof createCustomerData>;

function matchOf(key: CustomerKey): { match: Match; customer: Record<string, string> } {
  if ('email' in key) {
    const email = key.email.trim().toLowerCase();
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new AppError('unprocessable', 'Enter an email address, like sam@example.org.', [{ field: 'email', message: 'not an email address' }]);
    return { match: { digits: null, email }, customer: { email } };
  }
  if ('phone' in key) {
    const phone = readPhoneNumber(key.phone);
    if (!phone) throw new AppError('unprocessable', 'Enter the phone number with its country code, like +31 6 1234 5678.', [{ field: 'phone', message: 'not a phone number' }]);
    return { match: { digits: phone.slice(1), email: null }, customer: { phone } };
  }
  const digits = key.whatsapp_id.replace(/\D/g, '');
  if (digits.length < 3 || digits.length > 15) throw new AppError('unprocessable', "A WhatsApp id is the customer's number in digits, like 31612345678.", [{ field: 'whatsapp_id', message: 'not a WhatsApp id' }]);
  return { match: { digits, email: null }, customer: { whatsapp_id: digits } };
}

const digitsOf = (column: string) => sql`regexp_replace(coalesce(${sql.ref(column)}, ''), '[^0-9]', '', 'g')`;

type Q = Transaction<Database> | Db;

/** The workspace's sessions, web chats and WhatsApp conversations of the customer. */
async function findConversations(q: Q, workspaceId: string, m: Match) {
  const webchats = await q
    .selectFrom('webchat_conversations')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => (m.digits ? eb(digitsOf('visitor_phone'), '=', m.digits) : eb(sql`lower(visitor_email)`, '=', m.email)))
    .execute();
  const whatsapp = m.digits
    ? await q.selectFrom('whatsapp_conversations').select(['wa_id', 'external_id']).where('workspace_id', '=', workspaceId).where(digitsOf('wa_id'), '=', m.digits).execute()
    : [];
  const sessions = await q
    .selectFrom('sessions')
    .select(['id', 'channel', 'external_id'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) =>
      eb.or([
        m.digits ? eb(digitsOf('customer_phone'), '=', m.digits) : eb(sql`lower(customer_email)`, '=', m.email),
        ...(webchats.length ? [eb.and([eb('channel', '=', 'webchat'), eb('external_id', 'in', webchats.map((w) => w.id))])] : []),
        ...(whatsapp.length ? [eb.and([eb('channel', '=', 'whatsapp'), eb('external_id', 'in', whatsapp.map((w) => w.external_id))])] : []),
      ]),
    )
    .orderBy('created_at', 'desc')
    .execute();
  const webchatIds = new Set([...webchats.map((w) => w.id), ...sessions.filter((s) => s.channel === 'webchat').map((s) => s.external_id)]);
  return { sessions, webchatIds: [...webchatIds], waIds: [...new Set(whatsapp.map((w) => w.wa_id))] };
}

/** Strings whose presence in a JSON payload ties it to the customer: their ids, sessions and conversations. */
function needles(m: Match, found: Awaited<ReturnType<typeof findConversations>>): string[] {
  return [
    ...(m.digits ? [m.digits] : []),
    ...(m.email ? [m.email] : []),
    ...found.sessions.flatMap((s) => [s.id, s.external_id]),
    ...found.webchatIds,
    // An empty or tiny needle would be found in every payload of the workspace (position('' in x) is 1).
  ].filter((v) => v.length >= 3);
}

/** `text` (a JSON payload as text) contains one of the needles; lower-cased, as emails are matched. */
function containsAny(column: string, values: string[]) {
  return sql<boolean>`(${sql.join(values.map((v) => sql`position(${v.toLowerCase()} in lower(${sql.raw(column)}::text)) > 0`), sql` or `)})`;
}

export function createCustomerData(deps: CustomerDataDeps) {
  const { db, logger } = deps;

  async function collect(q: Q, workspaceId: string, m: Match) {
    const found = await findConversations(q, workspaceId, m);
    const sessionIds = found.sessions.map((s) => s.id);
    const values = needles(m, found);
    const digitsMatch = (column: string) => (m.digits ? sql<boolean>`${digitsOf(column)} = ${m.digits}` : sql<boolean>`false`);
    const [whatsappIn, whatsappOut, webhookEvents, notifications] = await Promise.all([
      q.selectFrom('whatsapp_inbound_messages').selectAll().where('workspace_id', '=', workspaceId).where(digitsMatch('wa_id')).execute(),
      q.selectFrom('whatsapp_outbound_messages').selectAll().where('workspace_id', '=', workspaceId).where(digitsMatch('wa_id')).execute(),
      values.length ? q.selectFrom('webhook_events').selectAll().where('workspace_id', '=', workspaceId).where(containsAny('payload', values)).execute() : [],
      q
        .selectFrom('notifications')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb.or([...(sessionIds.length ? [eb('session_id', 'in', sessionIds)] : []), containsAny('message', values.length ? values : ['\u0000'])]))
        .execute(),
    ]);
    return { found, sessionIds, values, whatsappIn, whatsappOut, webhookEvents, notifications };
  }

  return {
    async export(workspaceId: string, key: CustomerKey) {
      const { match, customer } = matchOf(key);
      const c = await collect(db, workspaceId, match);
      const sessionIds = c.sessionIds.slice(0, EXPORT_MAX_CONVERSATIONS);
      const [sessions, turns, messages, leads, whatsappConversations] = await Promise.all([
        sessionIds.length ? db.selectFrom('sessions').select(['id', 'channel', 'external_id', 'status', 'language', 'customer_phone', 'customer_email', 'customer_name', 'handoff', 'created_at', 'updated_at']).where('id', 'in', sessionIds).execute() : [],
        sessionIds.length ? db.selectFrom('session_turns').select(['session_id', 'ordinal', 'status', 'language', 'customer_message', 'reply', 'source', 'started_at', 'ended_at']).where('session_id', 'in', sessionIds).orderBy('started_at').execute() : [],
        sessionIds.length ? db.selectFrom('session_messages').select(['session_id', 'from', 'text', 'source', 'at']).where('session_id', 'in', sessionIds).orderBy('seq').execute() : [],
        c.found.webchatIds.length ? db.selectFrom('webchat_conversations').select(['id', 'page_url', 'visitor_name', 'visitor_email', 'visitor_phone', 'lead_at', 'created_at']).where('id', 'in', c.found.webchatIds).execute() : [],
        c.found.waIds.length ? db.selectFrom('whatsapp_conversations').select(['wa_id', 'external_id', 'profile_name', 'started_at', 'last_message_at']).where('workspace_id', '=', workspaceId).where('wa_id', 'in', c.found.waIds).execute() : [],
      ]);
      const conversations = sessions.map((s) => ({
        ...s,
        turns: turns.filter((t) => t.session_id === s.id).map(({ session_id: _, ...t }) => t),
        messages: messages.filter((x) => x.session_id === s.id).map(({ session_id: _, ...x }) => x),
      }));
      const found = {
        conversations: c.sessionIds.length,
        turns: turns.length,
        messages: messages.length,
        web_chat_leads: leads.filter((l) => l.lead_at !== null).length,
        whatsapp_messages: c.whatsappIn.length + c.whatsappOut.length,
        webhook_events: c.webhookEvents.length,
        notifications: c.notifications.length,
      };
      return {
        customer,
        exported_at: new Date().toISOString(),
        found,
        ...(c.sessionIds.length > sessionIds.length ? { left_out: { conversations: c.sessionIds.length - sessionIds.length } } : {}),
        data: {
          conversations,
          web_chats: leads,
          whatsapp: {
            conversations: whatsappConversations,
            received: c.whatsappIn.map((r) => ({ message_id: r.message_id, type: r.type, text: r.text, profile_name: r.profile_name, sent_at: r.sent_at })),
            sent: c.whatsappOut.map((r) => ({ kind: r.kind, body: r.body, status: r.status, created_at: r.created_at })),
          },
          webhook_events: c.webhookEvents.map((e) => ({ id: e.id, event: e.event, payload: e.payload, created_at: e.created_at })),
          notifications: c.notifications.map((n) => ({ kind: n.kind, message: n.message, created_at: n.created_at })),
        },
      };
    },

    async erase(workspaceId: string, key: CustomerKey) {
      const { match, customer } = matchOf(key);
      const before = await findConversations(db, workspaceId, match);
      // This engine's actors of those conversations stop first, so none writes a snapshot after the erasure.
      for (const s of before.sessions) {
        await deps.endConversation?.({ workspaceId, channel: s.channel, externalId: s.external_id }).catch((err: unknown) => logger.warn({ err }, 'a conversation to erase could not be stopped first'));
      }
      const erased = await db.transaction().execute(async (trx) => eraseIn(trx, workspaceId, match, await collect(trx, workspaceId, match)));
      logger.info({ workspaceId, by: Object.keys(customer)[0], ...erased }, 'a customer was erased');
      return { customer, found: erased, erased };
    },
  };
}

async function eraseIn(trx: Transaction<Database>, workspaceId: string, m: Match, c: CollectResult) {
  const count = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
  const turns = c.sessionIds.length ? await trx.selectFrom('session_turns').select((eb) => eb.fn.countAll<string>().as('n')).where('session_id', 'in', c.sessionIds).executeTakeFirstOrThrow() : { n: '0' };
  const messages = c.sessionIds.length ? await trx.selectFrom('session_messages').select((eb) => eb.fn.countAll<string>().as('n')).where('session_id', 'in', c.sessionIds).executeTakeFirstOrThrow() : { n: '0' };
  const notifications = c.notifications.length ? count(await trx.deleteFrom('notifications').where('id', 'in', c.notifications.map((n) => n.id)).executeTakeFirst()) : 0;
  // Turns and messages go with their sessions (on delete cascade).
  const conversations = c.sessionIds.length ? count(await trx.deleteFrom('sessions').where('id', 'in', c.sessionIds).executeTakeFirst()) : 0;
  const leads = c.found.webchatIds.length ? count(await trx.deleteFrom('webchat_conversations').where('id', 'in', c.found.webchatIds).executeTakeFirst()) : 0;
  const whatsappMessages =
    (c.whatsappOut.length ? count(await trx.deleteFrom('whatsapp_outbound_messages').where('id', 'in', c.whatsappOut.map((r) => r.id)).executeTakeFirst()) : 0) +
    (c.whatsappIn.length ? count(await trx.deleteFrom('whatsapp_inbound_messages').where('id', 'in', c.whatsappIn.map((r) => r.id)).executeTakeFirst()) : 0);
  if (c.found.waIds.length) await trx.deleteFrom('whatsapp_conversations').where('workspace_id', '=', workspaceId).where('wa_id', 'in', c.found.waIds).execute();
  // Deliveries and their attempts go with their event (on delete cascade), delivered or not.
  const webhookEvents = c.webhookEvents.length ? count(await trx.deleteFrom('webhook_events').where('id', 'in', c.webhookEvents.map((e) => e.id)).executeTakeFirst()) : 0;
  if (c.values.length) {
    // Live updates (the session's and the inbox's streams) and Meta's raw webhook bodies are not kept per workspace;
    // those naming the customer or their conversations go.
    await trx.deleteFrom('live_events').where(containsAny('payload', c.values)).execute();
    await trx.deleteFrom('live_events').where('key', 'in', c.values).execute();
    if (m.digits) await trx.deleteFrom('whatsapp_webhook_events').where(containsAny('body', [m.digits])).execute();
  }
  if (m.email) await trx.deleteFrom('sign_in_failures').where('key', '=', `email:${m.email}`).execute();
  return {
    conversations,
    turns: Number(turns.n),
    messages: Number(messages.n),
    web_chats: leads,
    whatsapp_messages: whatsappMessages,
    webhook_events: webhookEvents,
    notifications,
  };
}

type CollectResult = {
  found: Awaited<ReturnType<typeof findConversations>>;
  sessionIds: string[];
  values: string[];
  whatsappIn: { id: string }[];
  whatsappOut: { id: string }[];
  webhookEvents: { id: string }[];
  notifications: { id: string }[];
};
