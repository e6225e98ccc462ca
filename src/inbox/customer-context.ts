/**
 * The customer panel beside a conversation (docs/architecture.md, "Who handles a conversation"): who the customer is
 * on this channel (number, WhatsApp id or web chat), their name, email and number, the page the chat started on,
 * their language and time zone; and their earlier conversations in this workspace on any channel, matched by a whole
 * number, email or WhatsApp id (GET /v1/sessions/{id}/history).
 */
import { customerContextRepository } from '../../db/repositories/customer-context.repository.ts';
import type { Db } from '../../db/database.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { displayName } from '../accounts/display-name.ts';
import { notFound } from '../errors.ts';
import { internationalDigits, timeZoneOfNumber } from './customer-time-zone.ts';
import { MAX_CUSTOMER_HISTORY } from './limits.ts';

type SessionRow = NonNullable<Awaited<ReturnType<SessionsRepository['findById']>>>;

export interface CustomerContext {
  /** The customer's id on the channel: the caller's number, the WhatsApp id, or the web chat's conversation id. */
  channel_id: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  /** The page a web chat started on (without its query string); null on other channels. */
  page_url: string | null;
  language: string | null;
  /** The customer's IANA time zone: the browser's (web chat), else the one of their number's country; null when unknown. */
  time_zone: string | null;
  time_zone_source: 'browser' | 'phone_number' | null;
}

const iso = (value: Date | string) => new Date(value).toISOString();
/** A colleague as the history shows them: their email and the name the team sees. */
const named = (user: { email: string; name: string | null }) => ({ email: user.email, name: displayName(user) });

export function createCustomerContext(deps: { db: Db; sessions: Pick<SessionsRepository, 'findById'> }) {
  const repo = customerContextRepository(deps.db);

  async function contextOf(row: SessionRow): Promise<CustomerContext & { digits: string[]; emails: string[] }> {
    const chat = row.channel === 'webchat' ? await repo.webchat(row.workspace_id, row.external_id) : undefined;
    const waId = row.channel === 'whatsapp' ? ((await repo.whatsappId(row.workspace_id, row.external_id)) ?? internationalDigits(row.customer_phone, true)) : null;
    const phone = row.customer_phone ?? chat?.visitor_phone ?? null;
    const email = row.customer_email ?? chat?.visitor_email ?? null;
    const digits = [...new Set([waId, internationalDigits(row.customer_phone, row.channel === 'whatsapp'), internationalDigits(chat?.visitor_phone ?? null)].filter((d): d is string => Boolean(d)))];
    const emails = [...new Set([row.customer_email, chat?.visitor_email].filter((e): e is string => Boolean(e && e.includes('@'))).map((e) => e.trim().toLowerCase()))];
    const fromNumber = timeZoneOfNumber(digits[0] ?? null);
    return {
      channel_id: row.channel === 'whatsapp' ? waId : row.channel === 'phone' ? row.customer_phone : row.external_id,
      name: row.customer_name ?? chat?.visitor_name ?? null,
      email,
      phone,
      page_url: chat?.page_url ?? null,
      language: row.language || chat?.language || null,
      time_zone: chat?.time_zone ?? fromNumber,
      time_zone_source: chat?.time_zone ? 'browser' : fromNumber ? 'phone_number' : null,
      digits,
      emails,
    };
  }

  return {
    /** The panel's facts of a session already loaded in its workspace (GET /v1/sessions/{id} `customer_context`). */
    async of(row: SessionRow): Promise<CustomerContext> {
      const { digits: _digits, emails: _emails, ...context } = await contextOf(row);
      return context;
    },

    /** GET /v1/sessions/{id}/history: the customer's other conversations in this workspace, newest first. */
    async history(workspaceId: string, id: string) {
      const row = await deps.sessions.findById(workspaceId, id);
      if (!row) throw notFound('The session');
      const { digits, emails } = await contextOf(row);
      const rows = await repo.earlier(workspaceId, row.id, { digits, emails }, MAX_CUSTOMER_HISTORY);
      return {
        conversations: rows.map((r) => {
          const last = r.last_message === null ? null : (JSON.parse(r.last_message) as { from: 'customer' | 'bot' | 'agent'; text: string | null; at: string });
          return {
            id: r.id,
            channel: r.channel,
            started_at: iso(r.created_at),
            last_message: last ? { from: last.from, text: last.text, at: iso(last.at) } : null,
            handled_by: r.handled_by,
            agent: r.agent_email ? named({ email: r.agent_email, name: r.agent_name }) : null,
            answered_by: r.answered_by_email ? named({ email: r.answered_by_email, name: r.answered_by_name }) : null,
          };
        }),
      };
    },

    /** Per session id of the workspace: its channel and whether the team answered in it (GET /v1/notifications). */
    async sessionFacts(workspaceId: string, ids: string[]): Promise<Map<string, { channel: 'phone' | 'whatsapp' | 'webchat'; answered_by_team: boolean }>> {
      const rows = await repo.sessionFacts(workspaceId, [...new Set(ids)]);
      return new Map(rows.map((r) => [r.id, { channel: r.channel, answered_by_team: Boolean(r.answered_by_team) }]));
    },

    /** The browser's time zone the widget sent when a chat started (POST /v1/webchat/conversations `time_zone`). */
    async keepTimeZone(workspaceId: string, conversationId: string, timeZone: string): Promise<void> {
      await repo.setTimeZone(workspaceId, conversationId, timeZone);
    },
  };
}

export type CustomerContextService = ReturnType<typeof createCustomerContext>;
