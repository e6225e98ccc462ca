/**
 * The Overview's periods (docs/analytics.md, "Periods"): a conversation across midnight, days in the workspace's time
 * zone, the migration's backfill of conversations that existed before it, bad input, and the export's rows. The
 * conversations are written as rows at chosen times (the channels cannot be driven at 23:50 last Tuesday).
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../db/migrations/index.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

type Channel = 'phone' | 'whatsapp' | 'webchat';

/**
 * A spreadsheet's CSV reader: splits on `separator` outside quotes, a quote anywhere toggles quoting, a doubled quote
 * inside quotes is one quote (as Excel and LibreOffice read a file whose separator is not the one it was written with).
 */
function readCsv(text: string, separator: ';' | ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      if (quoted && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else quoted = !quoted;
    } else if (!quoted && ch === separator) {
      row.push(cell);
      cell = '';
    } else if (!quoted && ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  if (cell !== '' || row.length) rows.push([...row, cell]);
  return rows;
}

interface TurnAt {
  at: string;
  message: string;
  source: 'integrator' | 'knowledge_base' | 'ai' | 'fallback' | null;
  handoff?: boolean;
}

describeEachDatabase('the Overview over periods, time zones and bad input', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  /** A conversation that started at `startedAt`, with its turns; the triggers count it as the runtime's save would. */
  async function conversation(channel: Channel, startedAt: string, turns: TurnAt[], customer: { phone?: string; name?: string } = {}) {
    const { db } = get();
    const id = randomUUID();
    await db
      .insertInto('sessions')
      .values({ id, workspace_id: ws.workspaceId, channel, external_id: `x-${id}`, machine_version: 1, customer_phone: customer.phone ?? null, customer_email: null, customer_name: customer.name ?? null, created_at: startedAt, updated_at: turns.at(-1)?.at ?? startedAt })
      .execute();
    let ordinal = 0;
    for (const t of turns) {
      ordinal += 1;
      const ended = new Date(Date.parse(t.at) + 800).toISOString();
      await db
        .insertInto('session_turns')
        .values({
          id: randomUUID(), session_id: id, ordinal, status: 'completed', language: 'en', customer_message: t.message,
          reply: t.source ? `reply to ${t.message}` : null, source: t.source, botlink: null, knowledge: null, tool_rounds: '[]',
          handoff: t.handoff ? JSON.stringify({ kind: 'forward', connected: false, sentence: '', requestedBy: 'integrator' }) : null,
          timings: '{}', errors: '[]', started_at: t.at, ended_at: ended,
        })
        .execute();
    }
    return id;
  }

  const overview = (query: string, token = ws.owner) => service.api('GET', `/v1/analytics/overview?${query}`, { token });

  beforeAll(async () => {
    service = await startTestService(get());
    ws = await seedWorkspace(service);
  });
  afterAll(async () => {
    await service?.stop();
  });

  describe('a conversation across midnight, in the workspace time zone', () => {
    let acrossMidnight: string;
    beforeAll(async () => {
      expect((await service.api('PATCH', '/v1/workspace', { token: ws.owner, body: { time_zone: 'Europe/Amsterdam' } })).status).toBe(200);
      // 2026-03-10 23:50 in Amsterdam is 22:50 UTC; its second message comes at 00:10 on the 11th (23:10 UTC).
      acrossMidnight = await conversation('whatsapp', '2026-03-10T22:50:00Z', [
        { at: '2026-03-10T22:50:00Z', message: 'Where is my parcel?', source: 'integrator' },
        { at: '2026-03-10T23:10:00Z', message: 'And can I pay by card?', source: 'fallback', handoff: true },
      ]);
      // 00:30 on the 11th in Amsterdam, still the 10th in UTC.
      await conversation('phone', '2026-03-10T23:30:00Z', [{ at: '2026-03-10T23:30:00Z', message: 'Are you open on Sunday?', source: 'knowledge_base' }]);
      await conversation('webchat', '2026-03-11T09:00:00Z', [{ at: '2026-03-11T09:00:00Z', message: 'Do you ship to Belgium?', source: 'knowledge_base' }]);
    });

    it('day buckets are the workspace days: the conversation counts on the day it started, its messages on the days they arrived', async () => {
      const res = await service.api('GET', '/v1/analytics/timeseries?from=2026-03-10T00:00:00Z&to=2026-03-12T00:00:00Z&bucket=day', { token: ws.owner });
      expect(res.status).toBe(200);
      expect(res.body.time_zone).toBe('Europe/Amsterdam');
      const days = (res.body.buckets as { start: string; conversations: number; customer_messages: number; answered_by: Record<string, number> }[]).map((b) => ({
        start: b.start, conversations: b.conversations, customer_messages: b.customer_messages, fallback: b.answered_by.fallback,
      }));
      // Local midnights: 2026-03-10 00:00 CET is 2026-03-09T23:00Z.
      expect(days).toEqual([
        { start: '2026-03-09T23:00:00.000Z', conversations: 1, customer_messages: 1, fallback: 0 },
        { start: '2026-03-10T23:00:00.000Z', conversations: 2, customer_messages: 3, fallback: 1 },
        { start: '2026-03-11T23:00:00.000Z', conversations: 0, customer_messages: 0, fallback: 0 },
      ]);
    });

    it('a period ending at midnight counts the conversation but not its message after midnight; handed over follows the conversation', async () => {
      const res = await overview('from=2026-03-10T00:00:00Z&to=2026-03-10T23:00:00Z');
      expect(res.body).toMatchObject({ conversations: 1, customer_messages: 1, handed_over: 1, contained: 0, answered_by: { integrator: 1, fallback: 0 } });
      const after = await overview('from=2026-03-10T23:00:00Z&to=2026-03-12T00:00:00Z');
      expect(after.body).toMatchObject({ conversations: 2, customer_messages: 3, handed_over: 0, contained: 2, answered_by: { knowledge_base: 2, fallback: 1 } });
    });

    it('an hour is read whole: from=22:59 counts the 22:00 hour', async () => {
      const res = await overview('from=2026-03-10T22:59:00Z&to=2026-03-10T23:00:00Z');
      expect(res.body).toMatchObject({ from: '2026-03-10T22:00:00.000Z', to: '2026-03-10T23:00:00.000Z', conversations: 1 });
    });

    it('a period inside one hour is that hour, and a period ending inside an hour includes it', async () => {
      const inside = await overview('from=2026-03-10T22:10:00Z&to=2026-03-10T22:50:00Z');
      expect(inside.status).toBe(200);
      expect(inside.body).toMatchObject({ from: '2026-03-10T22:00:00.000Z', to: '2026-03-10T23:00:00.000Z', conversations: 1 });
      const endingInside = await overview('from=2026-03-10T20:00:00Z&to=2026-03-10T22:01:00Z');
      expect(endingInside.body).toMatchObject({ to: '2026-03-10T23:00:00.000Z', conversations: 1 });
    });

    it('a period that ends now (an API client\'s "the last 10 minutes") includes the current hour', async () => {
      const now = Date.now();
      const res = await overview(`from=${new Date(now - 10 * 60_000).toISOString()}&to=${new Date(now).toISOString()}`);
      expect(res.status).toBe(200);
      expect(Date.parse(res.body.to)).toBeGreaterThan(now);
    });

    it('the unanswered list links the conversation, named by the first words of its first message', async () => {
      const res = await service.api('GET', '/v1/analytics/unanswered?from=2026-03-10T00:00:00Z&to=2026-03-12T00:00:00Z', { token: ws.agent });
      expect(res.body.questions).toEqual([
        { text: 'And can I pay by card?', count: 1, last_at: '2026-03-10T23:10:00.000Z', session_ids: [acrossMidnight], sessions: [{ id: acrossMidnight, label: 'Where is my parcel?' }] },
      ]);
    });
  });

  describe('bad input is a clear 400 naming the field', () => {
    it.each([
      ['from after to', 'from=2026-03-12T00:00:00Z&to=2026-03-10T00:00:00Z', 'from'],
      ['from equal to to', 'from=2026-03-10T00:00:00Z&to=2026-03-10T00:00:00Z', 'from'],
      ['a period over 400 days', 'from=2025-01-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'to'],
      ['an unknown channel', 'channel=fax', 'channel'],
      ['a time that is no time', 'from=yesterday', 'from'],
    ])('%s', async (_name, query, field) => {
      for (const path of ['overview', 'timeseries', 'unanswered']) {
        const res = await service.api('GET', `/v1/analytics/${path}?${query}`, { token: ws.owner });
        expect(res.status, path).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ field }] });
      }
      const exported = await service.api('GET', `/v1/exports/conversations?${query}`, { token: ws.owner });
      expect(exported.status).toBe(400);
    });

    it('hour buckets over more than 31 days, an unknown bucket or format', async () => {
      const long = await service.api('GET', '/v1/analytics/timeseries?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z&bucket=hour', { token: ws.owner });
      expect(long.status).toBe(400);
      expect((await service.api('GET', '/v1/analytics/timeseries?bucket=week', { token: ws.owner })).status).toBe(400);
      expect((await service.api('GET', '/v1/exports/conversations?format=xlsx', { token: ws.owner })).body.error.details[0].field).toBe('format');
    });
  });

  describe('export', () => {
    const period = 'from=2026-04-01T00:00:00Z&to=2026-04-02T00:00:00Z';
    let id: string;
    beforeAll(async () => {
      id = await conversation('whatsapp', '2026-04-01T08:00:00Z', [
        { at: '2026-04-01T08:00:00Z', message: 'Hello, "quoted", and\na new line', source: 'integrator' },
        { at: '2026-04-01T08:01:00Z', message: '=SUM(A1:A3)', source: 'fallback', handoff: true },
      ], { phone: '+31612345678', name: 'Ann' });
    });

    it('CSV: a header and one row per turn, every field quoted as RFC 4180 says, formulas defused', async () => {
      const res = await service.api('GET', `/v1/exports/conversations?${period}&format=csv`, { token: ws.admin });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/csv');
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="conversations_2026-04-01_2026-04-02.csv"');
      const rows = readCsv(res.text, ',');
      expect(rows[0]).toEqual(['conversation_id', 'channel', 'started_at', 'customer_phone', 'customer_email', 'customer_name', 'turn', 'at', 'from', 'customer_message', 'reply', 'source', 'handoff']);
      // The line break inside the message stays inside its quotes; rows end in CRLF.
      expect(res.text.split('\r\n')[1]).toBe(`"${id}","whatsapp","2026-04-01T08:00:00.000Z","+31612345678","","Ann","1","2026-04-01T08:00:00.000Z","customer","Hello, ""quoted"", and\na new line","reply to Hello, ""quoted"", and\na new line","integrator",""`);
      expect(rows.find((r) => r.join().includes('SUM'))?.slice(9)).toEqual(["'=SUM(A1:A3)", 'reply to =SUM(A1:A3)', 'fallback', 'forward']);
    });

    it('CSV opened by a spreadsheet that splits on ";" (Dutch, German): no cell starts a formula', async () => {
      await conversation('webchat', '2026-04-03T09:00:00Z', [
        { at: '2026-04-03T09:00:00Z', message: "Hallo;=cmd|' /C calc'!A0", source: 'knowledge_base' },
        { at: '2026-04-03T09:01:00Z', message: 'a,+1;-2;@SUM(1)', source: 'fallback' },
        { at: '2026-04-03T09:02:00Z', message: '-minus first', source: null },
      ], { name: '@admin' });
      const res = await service.api('GET', '/v1/exports/conversations?from=2026-04-03T00:00:00Z&to=2026-04-04T00:00:00Z&format=csv', { token: ws.owner });
      for (const separator of [';', ','] as const) {
        const cells = readCsv(res.text, separator).flat();
        expect(cells.some((c) => c.includes('cmd|'))).toBe(true);
        expect(cells.filter((c) => /^[=+\-@]/.test(c) && !/^\+\d+$/.test(c)), separator).toEqual([]);
      }
    });

    it('JSON Lines: one object per turn with the conversation beside it', async () => {
      const res = await service.api('GET', `/v1/exports/conversations?${period}&format=jsonl`, { token: ws.owner });
      const rows = res.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(rows).toHaveLength(2);
      expect(rows[1]).toEqual({
        conversation_id: id, channel: 'whatsapp', started_at: '2026-04-01T08:00:00.000Z', customer_phone: '+31612345678', customer_email: null,
        customer_name: 'Ann', turn: 2, at: '2026-04-01T08:01:00.000Z', from: 'customer', customer_message: '=SUM(A1:A3)',
        reply: 'reply to =SUM(A1:A3)', source: 'fallback', handoff: 'forward',
      });
    });

    it('agents may not export', async () => {
      expect((await service.api('GET', `/v1/exports/conversations?${period}`, { token: ws.agent })).status).toBe(403);
    });
  });

  describe('the migration counts what existed before it', () => {
    it('rolled back and applied again, the figures are the same', async () => {
      const query = 'from=2026-03-01T00:00:00Z&to=2026-05-01T00:00:00Z';
      const before = (await overview(query)).body;
      expect(before.conversations).toBeGreaterThan(0);
      const { db } = get();
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      // Back to the migration before 0022 (the later ones go down first), then up again.
      const names = Object.keys(migrations).sort();
      const down = await migrator.migrateTo(names[names.indexOf('0022-analytics') - 1]!);
      expect(down.error).toBeUndefined();
      expect(down.results?.map((r) => r.migrationName)).toContain('0022-analytics');
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from information_schema.tables where table_name = 'analytics_hours' and table_schema = current_schema()`.execute(db);
      expect(rows[0]!.n).toBe(0);
      const up = await migrator.migrateToLatest();
      expect(up.error).toBeUndefined();
      expect((await overview(query)).body).toEqual(before);
    });
  });
});
