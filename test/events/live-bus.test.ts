/**
 * Live events across engines (src/events/live-bus.ts, docs/architecture.md, "Live events across engines"): two
 * engines on one database; a conversation handled on one is seen live on a stream opened on the other, by NOTIFY, by
 * the poll when there is no LISTEN, and again after the LISTEN connection was lost.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOverConnection } from '../../db/database.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

/** A session's event stream on one engine: every event as it arrives, with when. */
async function openStream(service: TestService, sessionId: string, token: string) {
  const controller = new AbortController();
  const res = await fetch(`${service.url}/v1/sessions/${sessionId}/events`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  expect(res.status).toBe(200);
  const events: { type: string; data: Record<string, unknown>; at: number }[] = [];
  const reader = res.body!.getReader();
  let buffer = '';
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += new TextDecoder().decode(value);
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const type = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (type && data) events.push({ type, data: JSON.parse(data) as Record<string, unknown>, at: performance.now() });
      }
    }
  })();
  const until = async (check: () => boolean, timeoutMs: number) => {
    const deadline = performance.now() + timeoutMs;
    while (!check()) {
      if (performance.now() > deadline) throw new Error(`not within ${timeoutMs} ms; got ${events.map((e) => e.type).join(', ')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  await until(() => events.some((e) => e.type === 'state'), 5_000);
  return { events, until, close: () => controller.abort() };
}

describeEachDatabase('live events reach the streams of every engine', (get) => {
  describe('with LISTEN: by NOTIFY, well before the poll', () => {
    let a: TestService;
    let b: TestService;
    let ws: Awaited<ReturnType<typeof seedWorkspace>>;
    beforeAll(async () => {
      // The poll is slow on purpose: what arrives within a second came by NOTIFY.
      const options = { live: { pollMs: 30_000, watchesRefreshMs: 30_000 } };
      a = await startTestService(get(), {}, { ...options, sessions: { instanceId: 'engine-a' } });
      b = await startTestService(get(), {}, { ...options, sessions: { instanceId: 'engine-b' } });
      ws = await seedWorkspace(a);
    });
    afterAll(async () => {
      await a.stop();
      await b.stop();
    });

    it('a turn handled on engine A is on a stream of engine B: started, reply and completed, in order', async () => {
      const first = await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-live-1', text: 'hello', language: 'en' });
      const stream = await openStream(b, first.sessionId, ws.agent);
      // The watch reaches engine A by NOTIFY too (generous: a loaded machine is slow to read it).
      await new Promise((r) => setTimeout(r, 1_000));
      const sent = performance.now();
      await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-live-1', text: 'are you open on sunday', language: 'en' });
      await stream.until(() => stream.events.some((e) => e.type === 'turn_completed'), 3_000);
      stream.close();
      const types = stream.events.map((e) => e.type).filter((t) => t !== 'state');
      expect(types).toEqual(['turn_started', 'reply', 'turn_completed']);
      expect(stream.events.find((e) => e.type === 'turn_started')!.data).toMatchObject({ sessionId: first.sessionId, message: 'are you open on sunday' });
      expect(stream.events.at(-1)!.at - sent).toBeLessThan(2_000);
    });

    it('a turn nobody watches on another engine writes nothing to the shared log', async () => {
      const before = await get().db.selectFrom('live_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-unwatched', text: 'hello', language: 'en' });
      await new Promise((r) => setTimeout(r, 100));
      const after = await get().db.selectFrom('live_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n));
    });
  });

  describe('without LISTEN (a transaction pooler): by the poll', () => {
    let a: TestService;
    let b: TestService;
    let ws: Awaited<ReturnType<typeof seedWorkspace>>;
    beforeAll(async () => {
      const { listen: _none, ...database } = get();
      const options = { live: { pollMs: 200, watchesRefreshMs: 200 } };
      a = await startTestService(database, {}, { ...options, sessions: { instanceId: 'engine-c' } });
      b = await startTestService(database, {}, { ...options, sessions: { instanceId: 'engine-d' } });
      ws = await seedWorkspace(a);
    });
    afterAll(async () => {
      await a.stop();
      await b.stop();
    });
    it('every event arrives, once, within a poll or two', async () => {
      const first = await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-poll', text: 'hello', language: 'en' });
      const stream = await openStream(b, first.sessionId, ws.agent);
      // The watch reaches engine A at its next look (every 200 ms; generous for a loaded machine).
      await new Promise((r) => setTimeout(r, 1_000));
      for (const text of ['one', 'two', 'three']) await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-poll', text, language: 'en' });
      await stream.until(() => stream.events.filter((e) => e.type === 'turn_completed').length === 3, 3_000);
      await new Promise((r) => setTimeout(r, 500));
      stream.close();
      expect(stream.events.filter((e) => e.type === 'turn_started').map((e) => e.data.message)).toEqual(['one', 'two', 'three']);
      expect(stream.events.filter((e) => e.type === 'turn_completed')).toHaveLength(3);
    });
  });
});

/** The database's URL with a connection name, which pg_stat_activity shows as application_name. */
function withApplicationName(url: string, name: string): string {
  const named = new URL(url);
  named.searchParams.set('application_name', name);
  return named.href;
}

// A lost LISTEN connection needs a server to lose it on: the real PostgreSQL (CI sets TEST_DATABASE_URL).
describeEachDatabase('live events after the LISTEN connection was lost', (get) => {
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  // These engines' LISTEN connections carry a name of their own: only they are cut, not other test files' listeners.
  const tag = `live_lost_${process.pid}`;
  beforeAll(async () => {
    const options = { live: { pollMs: 500, watchesRefreshMs: 500 } };
    const database = get();
    const tagged = database.kind === 'postgres' ? { ...database, listen: listenOverConnection(withApplicationName(database.url!, tag)) } : database;
    a = await startTestService(tagged, {}, { ...options, sessions: { instanceId: 'engine-e' } });
    b = await startTestService(tagged, {}, { ...options, sessions: { instanceId: 'engine-f' } });
    ws = await seedWorkspace(a);
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  it('still arrive (the poll), and NOTIFY works again once it is back', async () => {
    if (get().kind === 'postgres') {
      // Every LISTEN connection of this database's engines goes away, as when the server or a network drops it.
      const killed = await sql<{ n: number }>`
        select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
        where application_name = ${tag} and datname = current_database() and query ilike 'listen %'`.execute(get().db);
      expect(killed.rows[0]!.n).toBeGreaterThanOrEqual(2);
    }
    const first = await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-lost', text: 'hello', language: 'en' });
    const stream = await openStream(b, first.sessionId, ws.agent);
    // The watch reaches engine A at its next look (every 500 ms without LISTEN; generous for a loaded machine).
    await new Promise((r) => setTimeout(r, 2_000));
    await a.runtime.handleMessage({ workspaceId: ws.workspaceId, channel: 'phone', externalId: 'call-lost', text: 'after the loss', language: 'en' });
    await stream.until(() => stream.events.some((e) => e.type === 'turn_completed'), 4_000);
    stream.close();
    expect(stream.events.find((e) => e.type === 'turn_started')!.data).toMatchObject({ message: 'after the loss' });
    if (get().kind === 'postgres') {
      // Listening again: the engines' LISTEN connections are back.
      const deadline = Date.now() + 5_000;
      let listening = 0;
      while (Date.now() < deadline && listening < 2) {
        listening = (await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
          where application_name = ${tag} and datname = current_database() and query ilike 'listen %'`.execute(get().db)).rows[0]!.n;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(listening).toBeGreaterThanOrEqual(2);
    }
  });
});
