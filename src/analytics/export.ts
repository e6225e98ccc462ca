/**
 * GET /v1/exports/conversations (docs/analytics.md, "Export"): the period's conversations with their turns as CSV or
 * JSON Lines, written while they are read. Conversations come a batch at a time in the order they started (a keyset
 * cursor, so no batch re-reads the ones before it), and the next batch is read only once the client has taken the
 * last one (the response's backpressure): a month of a busy workspace is never held in memory.
 */
import { once } from 'node:events';
import type { Response } from 'express';
import type { AnalyticsRepository, ExportSession } from '../../db/repositories/analytics.repository.ts';
import type { AnalyticsPeriod } from './period.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** Conversations per read. */
export const EXPORT_BATCH = 1000;

export const EXPORT_COLUMNS = [
  'conversation_id', 'channel', 'started_at', 'customer_phone', 'customer_email', 'customer_name',
  'turn', 'at', 'from', 'customer_message', 'reply', 'source', 'handoff',
] as const;
type ExportRow = Record<(typeof EXPORT_COLUMNS)[number], string | number | null>;

/** A character that makes a spreadsheet read a cell as a formula when it comes first. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** The same character right after a list separator: `,` or `;` (Dutch and German spreadsheets split on `;`). */
const FORMULA_AFTER_SEPARATOR = /([,;])([=+\-@])/g;

/**
 * A CSV field (RFC 4180), always quoted, so a reader splitting on `;` or `,` keeps it one cell. Customer text that a
 * spreadsheet would read as a formula gets an apostrophe before the formula character: first in the field (a plain
 * +31… phone number aside), and after every `,` or `;` in it, since a spreadsheet whose list separator is `;` may
 * start a cell there (docs/analytics.md, "Export").
 */
export function csvField(value: string | number | null): string {
  if (value === null) return '""';
  let text = String(value);
  if (typeof value === 'string') {
    // A phone number in E.164 (+31…) is no formula: it stays as it is.
    if (FORMULA_START.test(text) && !/^\+\d+$/.test(text)) text = `'${text}`;
    text = text.replace(FORMULA_AFTER_SEPARATOR, "$1'$2");
  }
  return `"${text.replaceAll('"', '""')}"`;
}

/** One conversation's rows: its turns and the messages outside turns, in the order they happened. */
type Content = Awaited<ReturnType<AnalyticsRepository['exportContent']>>;

function conversationRows(s: ExportSession, content: Content): ExportRow[] {
  const base = {
    conversation_id: s.id,
    channel: s.channel,
    started_at: s.created_at,
    customer_phone: s.customer_phone,
    customer_email: s.customer_email,
    customer_name: s.customer_name,
  };
  // ISO times in UTC with milliseconds sort as text.
  const rows: { at: string; row: ExportRow }[] = [];
  for (const t of content.turns) {
    rows.push({
      at: t.started_at,
      row: { ...base, turn: t.ordinal, at: t.started_at, from: 'customer', customer_message: t.customer_message, reply: t.reply, source: t.source, handoff: t.handoff },
    });
  }
  for (const m of content.messages) {
    const agent = m.from === 'agent';
    rows.push({
      at: m.at,
      row: { ...base, turn: null, at: m.at, from: m.from, customer_message: agent ? null : m.text, reply: agent ? m.text : null, source: agent ? 'agent' : null, handoff: null },
    });
  }
  if (content.messages.length > 0) rows.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return rows.map((r) => r.row);
}

function render(format: ExportFormat, rows: ExportRow[]): string {
  if (format === 'jsonl') return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  return rows.map((r) => `${EXPORT_COLUMNS.map((c) => csvField(r[c])).join(',')}\r\n`).join('');
}

/** Writes the export to `res`; resolves when done or when the client went away. */
export async function streamConversations(
  repo: AnalyticsRepository,
  workspaceId: string,
  period: AnalyticsPeriod,
  format: ExportFormat,
  res: Response,
): Promise<void> {
  const stamp = `${period.from.toISOString().slice(0, 10)}_${period.to.toISOString().slice(0, 10)}`;
  res.status(200);
  res.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="conversations_${stamp}.${format}"`);
  res.setHeader('Cache-Control', 'no-store');
  if (format === 'csv') res.write(`${EXPORT_COLUMNS.map(csvField).join(',')}\r\n`);
  const p = { workspaceId, ...period };
  let after: { createdAt: string; id: string } | null = null;
  for (;;) {
    if (res.destroyed) return;
    const sessions = await repo.exportSessions(p, after, EXPORT_BATCH);
    if (sessions.length === 0) break;
    const content = await repo.exportContent(sessions.map((s) => s.id));
    const bySession = new Map<string, Content>(sessions.map((s) => [s.id, { turns: [], messages: [] }]));
    for (const t of content.turns) bySession.get(t.session_id)?.turns.push(t);
    for (const m of content.messages) bySession.get(m.session_id)?.messages.push(m);
    const chunk = render(format, sessions.flatMap((s) => conversationRows(s, bySession.get(s.id)!)));
    if (chunk !== '' && !res.write(chunk)) {
      const done = new AbortController();
      await Promise.race([once(res, 'drain', { signal: done.signal }), once(res, 'close', { signal: done.signal })]);
      done.abort();
    }
    const last = sessions.at(-1)!;
    after = { createdAt: last.created_at, id: last.id };
    if (sessions.length < EXPORT_BATCH) break;
  }
  res.end();
}
