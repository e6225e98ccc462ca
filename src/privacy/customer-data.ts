/**
 * One customer's data in one workspace (docs/privacy.md, "Export and erasure"): their sessions, web chats and
 * WhatsApp ids are resolved first, from a whole number or email; every table's rows are then reached from those, as
 * CUSTOMER_TABLES (customer-tables.ts) says, and exported as one JSON document or erased in one transaction.
 *
 * - A number finds the sessions whose customer has that number (a call, a WhatsApp conversation, a web chat lead that
 *   gave it), the web chats whose lead gave it now or earlier, and the WhatsApp id with those digits.
 * - An email finds the sessions whose customer has it (the integrator's customer fields, a web chat's lead), the web
 *   chats whose lead gave it now or earlier, and the conversations in which the customer wrote it themselves (as a
 *   whole address); the WhatsApp ids of the WhatsApp sessions found are then theirs too.
 * - Then every session of those WhatsApp ids and web chats is theirs as well.
 */
import { sql, type Transaction } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Database } from '../../db/schema.ts';
import type { Logger } from '../log.ts';
import { readCustomerKey, type CustomerIdentity, type CustomerKey } from './customer-identity.ts';
import { customerTables, inWords, numberDigits, type CustomerRecords, type CustomerTable, type CustomerTableName } from './customer-tables.ts';
import { EXPORT_MAX_CONVERSATIONS } from './limits.ts';

export type { CustomerKey } from './customer-identity.ts';

export interface CustomerDataDeps {
  db: Db;
  logger: Logger;
  /** Stops this engine's actor of a conversation before it is erased, so it writes nothing afterwards. */
  endConversation?: (session: { workspaceId: string; channel: 'phone' | 'whatsapp' | 'webchat'; externalId: string }) => Promise<void>;
}

export type CustomerData = ReturnType<typeof createCustomerData>;

type Q = Transaction<Database> | Db;
type Counts = Record<CustomerTableName, number>;
type Session = { id: string; channel: 'phone' | 'whatsapp' | 'webchat'; external_id: string };

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The email as a whole address in a text: not a part of a longer address (`xsam@…`, `…org.uk`). */
const wholeEmail = (email: string) => `(^|[^[:alnum:]._%+-])${escapeRegex(email)}($|[^[:alnum:]_.-]|\\.($|[^[:alnum:]]))`;

async function sessionsWhere(q: Q, workspaceId: string, where: ReturnType<typeof sql<boolean>>): Promise<Session[]> {
  const { rows } = await sql<Session>`select id, channel, external_id from sessions where workspace_id = ${workspaceId} and ${where} order by created_at desc`.execute(q);
  return rows;
}

async function column(q: Q, query: ReturnType<typeof sql>): Promise<string[]> {
  const { rows } = await sql<{ v: string }>`select distinct v from (${query}) x(v) where v is not null`.execute(q);
  return rows.map((r) => r.v);
}

const inList = (values: readonly string[]) => (values.length ? sql.join(values) : sql`null`);

/** The customer's sessions, web chats and WhatsApp ids in the workspace (see the top of this file). */
export async function findCustomer(q: Q, workspaceId: string, who: CustomerIdentity): Promise<CustomerRecords & { sessions: Session[] }> {
  const { digits, email } = who;
  const leadMatch = (phone: string, mail: string) =>
    digits ? sql<boolean>`${numberDigits(sql.ref(phone))} = ${digits}` : sql<boolean>`lower(${sql.ref(mail)}) = ${email}`;
  const webchatIds = await column(
    q,
    sql`select id::text from webchat_conversations where workspace_id = ${workspaceId} and ${leadMatch('visitor_phone', 'visitor_email')}
        union select conversation_id::text from webchat_earlier_leads where workspace_id = ${workspaceId} and ${leadMatch('visitor_phone', 'visitor_email')}`,
  );
  const ownWords = email
    ? sql<boolean>`id in (select t.session_id from session_turns t join sessions s on s.id = t.session_id where s.workspace_id = ${workspaceId} and t.customer_message ~* ${wholeEmail(email)}
                   union select m.session_id from session_messages m join sessions s on s.id = m.session_id where s.workspace_id = ${workspaceId} and m."from" = 'customer' and m.text ~* ${wholeEmail(email)})`
    : sql<boolean>`false`;
  const seeds = await sessionsWhere(q, workspaceId, sql<boolean>`(${leadMatch('customer_phone', 'customer_email')} or ${ownWords})`);

  // The WhatsApp ids: the number's digits, or those of the WhatsApp sessions found.
  const whatsappSessions = seeds.filter((s) => s.channel === 'whatsapp').map((s) => s.external_id);
  const waIds = digits
    ? [digits]
    : await column(
        q,
        sql`select wa_id from whatsapp_conversations where workspace_id = ${workspaceId} and external_id in (${inList(whatsappSessions)})
            union select wa_id from whatsapp_inbound_messages where workspace_id = ${workspaceId} and session_external_id in (${inList(whatsappSessions)})`,
      );
  const chats = [...new Set([...webchatIds, ...seeds.filter((s) => s.channel === 'webchat').map((s) => s.external_id)])];
  // Every session of those web chats and WhatsApp ids.
  const more = await sessionsWhere(
    q,
    workspaceId,
    sql<boolean>`((channel = 'webchat' and external_id in (${inList(chats)}))
      or (channel = 'whatsapp' and (${numberDigits(sql.ref('customer_phone'))} in (${inList(waIds)})
        or external_id in (select external_id from whatsapp_conversations where workspace_id = ${workspaceId} and wa_id in (${inList(waIds)}))
        or external_id in (select session_external_id from whatsapp_inbound_messages where workspace_id = ${workspaceId} and wa_id in (${inList(waIds)})))))`,
  );
  const sessions = [...new Map([...seeds, ...more].map((s) => [s.id, s])).values()];
  const phoneNumberIds = await column(
    q,
    sql`select phone_number_id from whatsapp_accounts where workspace_id = ${workspaceId}
        union select phone_number_id from whatsapp_inbound_messages where workspace_id = ${workspaceId} and wa_id in (${inList(waIds)})
        union select phone_number_id from whatsapp_outbound_messages where workspace_id = ${workspaceId} and wa_id in (${inList(waIds)})`,
  );
  return {
    workspaceId,
    digits,
    email,
    sessions,
    sessionIds: sessions.map((s) => s.id),
    externalIds: [...new Set(sessions.map((s) => s.external_id))],
    webchatIds: chats,
    waIds,
    phoneNumberIds,
  };
}

/** The customer's rows of one table, every column but those the table's entry leaves out. */
async function rowsOf(q: Q, table: string, entry: CustomerTable, c: CustomerRecords): Promise<Record<string, unknown>[]> {
  const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)} where ${entry.where(c)}`.execute(q);
  return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([name]) => !entry.omit?.includes(name))));
}

/**
 * Deletes the customer's rows of one table in one statement, locking them first: `found` is what the lock took and
 * `erased` what the delete removed, the same rows. Rows not processed yet (`later`) are marked instead.
 */
type Erased = { found: number; erased: number; later: number };

async function eraseFrom(trx: Transaction<Database>, table: string, entry: CustomerTable, c: CustomerRecords): Promise<Erased> {
  const key = sql.join(entry.key.map((k) => sql.ref(k)));
  const t = sql.table(table);
  const pending = entry.later ? sql<boolean>`${sql.ref(entry.later.pendingWhile)} is null` : sql<boolean>`false`;
  const { rows } = await sql<Erased>`
    with f as (select ${key}, ${pending} as pending from ${t} where ${entry.where(c)} for update),
    d as (delete from ${t} where (${key}) in (select ${key} from f where not pending) returning 1),
    m as (${entry.later ? sql`update ${t} set ${sql.ref(entry.later.flag)} = true where (${key}) in (select ${key} from f where pending) returning 1` : sql`select 1 where false`})
    select (select count(*) from f where not pending)::int as found, (select count(*) from d)::int as erased, (select count(*) from m)::int as later`.execute(trx);
  return rows[0]!;
}

export function createCustomerData(deps: CustomerDataDeps) {
  const { db, logger } = deps;

  return {
    async export(workspaceId: string, key: CustomerKey) {
      const who = readCustomerKey(key);
      const all = await findCustomer(db, workspaceId, who);
      // Newest first; the oldest beyond the limit are said to be left out.
      const records = { ...all, sessionIds: all.sessionIds.slice(0, EXPORT_MAX_CONVERSATIONS) };
      const found = {} as Counts;
      const data: Record<string, Record<string, unknown>[]> = {};
      for (const [table, entry] of customerTables()) {
        data[table] = await rowsOf(db, table, entry, records);
        found[table] = table === 'sessions' ? all.sessionIds.length : data[table].length;
      }
      const leftOut = all.sessionIds.length - records.sessionIds.length;
      const leftOutSaid = leftOut > 0 ? { left_out: { sessions: leftOut } } : {};
      return { customer: who.customer, exported_at: new Date().toISOString(), found, said: inWords(found), ...leftOutSaid, data };
    },

    async erase(workspaceId: string, key: CustomerKey) {
      const who = readCustomerKey(key);
      const before = await findCustomer(db, workspaceId, who);
      // This engine's actors of those conversations stop first, so none writes a snapshot after the erasure.
      for (const s of before.sessions) {
        await deps.endConversation?.({ workspaceId, channel: s.channel, externalId: s.external_id }).catch((err: unknown) => logger.warn({ err }, 'a conversation to erase could not be stopped first'));
      }
      const result = await db.transaction().execute(async (trx) => {
        const records = await findCustomer(trx, workspaceId, who);
        const found = {} as Counts;
        const erased = {} as Counts;
        const later: Partial<Counts> = {};
        for (const [table, entry] of customerTables()) {
          const r = await eraseFrom(trx, table, entry, records);
          found[table] = r.found;
          erased[table] = r.erased;
          if (entry.later) later[table] = r.later;
        }
        return { found, erased, later };
      });
      logger.info({ workspaceId, by: Object.keys(who.customer)[0], ...result.erased }, 'a customer was erased');
      return { customer: who.customer, found: result.found, erased: result.erased, erased_once_processed: result.later, said: inWords(result.erased) };
    },
  };
}
