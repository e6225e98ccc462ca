/**
 * Presence per person, and what customers are told from it (docs/architecture.md, "Presence and assignment"): each user
 * sets available, away or offline, every engine reads the same; "available" lapses to "away" without an open dashboard
 * for PRESENCE_IDLE_MINUTES and holds while one is open (its stream marks it seen, on whichever engine holds it); the
 * widget says a colleague will reply only while someone is available, and outside the team hours until when the team
 * is away; PUT /v1/team stays for API clients. Every change reaches the open dashboards of the workspace (and no
 * other) on every engine, as the inbox stream's `presence` event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { awayUntilPhrase, phrase } from '../../src/ai/phrases.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { followEvents, seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const SHOP = 'https://shop.example';

describeEachDatabase('presence per person', (get) => {
  let a: TestService;
  let b: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let widgetKey = '';
  const api = (service: TestService, method: string, path: string, token: string, body?: unknown) => service.api(method, path, { token, ...(body === undefined ? {} : { body }) });
  const widget = (method: string, path: string, body?: unknown, token?: string) =>
    a.api(method, path, { headers: { 'x-widget-key': widgetKey, origin: SHOP, ...(token ? { 'x-visitor-token': token } : {}) }, ...(body === undefined ? {} : { body }) });
  const statusOf = async (service: TestService, userId: string) =>
    ((await api(service, 'GET', '/v1/team/presence', ws.owner)).body.users as Array<{ id: string; name: string; status: string }>).find((u) => u.id === userId)?.status;
  /** The person's dashboard was last seen `minutes` ago (the clock moved on). */
  const lastSeenAgo = (userId: string, minutes: number) =>
    sql`update team_presence set last_seen_at = now() - (${minutes} * interval '1 minute') where user_id = ${userId}`.execute(get().db);

  async function askForPerson(text = 'Can I talk to someone?') {
    const started = await widget('POST', '/v1/webchat/conversations', { visitor_message: 'Hello', page_url: `${SHOP}/` });
    expect(started.status).toBe(201);
    await a.runtime.settled();
    const escalated = await widget('POST', `/v1/webchat/conversations/${started.body.conversation_id}/escalate`, { message: text }, started.body.visitor_token);
    expect(escalated.status).toBeLessThan(300);
    return escalated.body.reply as string;
  }

  beforeAll(async () => {
    // A short sweep, so a lapse is written within the test's patience.
    const options = { inbox: { presenceSweepMs: 100, presenceTouchMs: 100 } };
    a = await startTestService(get(), {}, { ...options, sessions: { instanceId: 'engine-a' } });
    b = await startTestService(get(), {}, { ...options, sessions: { instanceId: 'engine-b' } });
    ws = await seedWorkspace(a);
    expect((await api(a, 'PUT', '/v1/webchat', ws.owner, { allowed_origins: [SHOP] })).status).toBe(200);
    widgetKey = (await api(a, 'GET', '/v1/keys/widget', ws.owner)).body.key as string;
  });
  afterAll(async () => {
    await a.stop();
    await b.stop();
  });

  describe('each person sets their own, and every engine reads it', () => {
    it('starts offline, is set on one engine and read on the other, with the display name', async () => {
      expect(await statusOf(b, ws.agentId)).toBe('offline');
      expect((await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' })).body).toEqual({ status: 'available' });
      const team = (await api(b, 'GET', '/v1/team/presence', ws.agent)).body.users as Array<{ id: string; name: string; status: string }>;
      expect(team.find((u) => u.id === ws.agentId)).toEqual({ id: ws.agentId, name: 'Agent', status: 'available' });
      expect((await api(b, 'GET', '/v1/me/presence', ws.agent)).body).toEqual({ status: 'available' });
      expect((await api(b, 'GET', '/v1/team', ws.agent)).body).toEqual({ available: true, available_now: true });
      expect((await api(b, 'PUT', '/v1/me/presence', ws.agent, { status: 'away' })).body).toEqual({ status: 'away' });
      expect(await statusOf(a, ws.agentId)).toBe('away');
    });

    it('refuses an unknown status and a caller without a token', async () => {
      expect((await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'busy' })).status).toBe(400);
      expect((await a.api('PUT', '/v1/me/presence', { body: { status: 'available' } })).status).toBe(401);
      expect((await a.api('GET', '/v1/team/presence')).status).toBe(401);
    });

    it('another workspace sees only its own people', async () => {
      const other = await seedWorkspace(a, 'Elsewhere');
      const users = (await api(a, 'GET', '/v1/team/presence', other.owner)).body.users as Array<{ id: string }>;
      expect(users.map((u) => u.id)).not.toContain(ws.agentId);
      expect(users).toHaveLength(3);
    });
  });

  describe('"available" lapses to "away" without an open dashboard', () => {
    it('lapses after PRESENCE_IDLE_MINUTES with no dashboard, on every engine, and the sweep writes it', async () => {
      await api(a, 'PUT', '/v1/me/presence', ws.admin, { status: 'available' });
      await lastSeenAgo(ws.adminId, 6);
      // Read as away at once, before any sweep.
      expect(await statusOf(b, ws.adminId)).toBe('away');
      expect((await api(b, 'GET', '/v1/team', ws.admin)).body.available).toBe(false);
      await expect.poll(async () => (await get().db.selectFrom('team_presence').select('status').where('user_id', '=', ws.adminId).executeTakeFirst())?.status, { timeout: 5_000 }).toBe('away');
    });

    it('holds while a dashboard stream is open on the other engine, which marks it seen', async () => {
      await api(a, 'PUT', '/v1/me/presence', ws.admin, { status: 'available' });
      const controller = new AbortController();
      const stream = await fetch(`${b.url}/v1/inbox/events`, { headers: { authorization: `Bearer ${ws.admin}` }, signal: controller.signal });
      expect(stream.status).toBe(200);
      try {
        // Four minutes without a sign (the lapse is at five): engine b, holding the stream, marks the person seen
        // within its touch interval, so they never lapse (at six minutes the sweep and the touch would race).
        await lastSeenAgo(ws.adminId, 4);
        const seenAgoMs = async () => Date.now() - new Date((await get().db.selectFrom('team_presence').select('last_seen_at').where('user_id', '=', ws.adminId).executeTakeFirstOrThrow()).last_seen_at).getTime();
        await expect.poll(seenAgoMs, { timeout: 15_000 }).toBeLessThan(60_000);
        expect(await statusOf(a, ws.adminId)).toBe('available');
        const row = await get().db.selectFrom('team_presence').select(['status', 'last_seen_at']).where('user_id', '=', ws.adminId).executeTakeFirstOrThrow();
        expect(row.status).toBe('available');
        expect(Date.now() - new Date(row.last_seen_at).getTime()).toBeLessThan(60_000);
      } finally {
        controller.abort();
      }
      // Closed: no engine marks it any more, and the lapse follows.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await lastSeenAgo(ws.adminId, 6);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await statusOf(a, ws.adminId)).toBe('away');
    });
  });

  describe('what the widget says follows presence', () => {
    it('nobody available: the team is away; someone available: a colleague will reply', async () => {
      await api(a, 'PUT', '/v1/team', ws.owner, { available: false });
      expect(await askForPerson()).toBe(phrase('handoff_waiting_closed', 'en'));
      await api(b, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' });
      expect(await askForPerson()).toBe(phrase('handoff_waiting', 'en'));
      // Lapsed (no dashboard for the idle time): away again, without anyone setting it.
      await lastSeenAgo(ws.agentId, 6);
      expect(await askForPerson()).toBe(phrase('handoff_waiting_closed', 'en'));
    });

    it('outside the team hours the visitor is told until when, whoever is available', async () => {
      await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' });
      // Open tomorrow (UTC) from 09:00 only: now is outside, and the next opening is tomorrow at 09:00.
      const tomorrow = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][(new Date().getUTCDay() + 1) % 7]!;
      const hours = { time_zone: 'UTC', week: { [tomorrow]: [['09:00', '10:00']] } };
      expect((await api(a, 'PUT', '/v1/phone', ws.owner, { numbers: [], team_hours: hours })).status).toBe(200);
      try {
        expect((await api(a, 'GET', '/v1/team', ws.owner)).body).toEqual({ available: true, available_now: false });
        const reply = await askForPerson();
        expect(reply).toBe(awayUntilPhrase('handoff_waiting_until', 'en', { day: tomorrow, time: '09:00', today: false }));
        expect(reply).toMatch(/^The team is away until [A-Z][a-z]+day 09:00; they will reply to you here then\.$/);
      } finally {
        expect((await api(a, 'PUT', '/v1/phone', ws.owner, { numbers: [], team_hours: null })).status).toBe(200);
      }
    });

    it('a conversation already waiting is told the same as a fresh handover, each time it asks again', async () => {
      const started = await widget('POST', '/v1/webchat/conversations', { visitor_message: 'Hello', page_url: `${SHOP}/` });
      await a.runtime.settled();
      const askAgain = async () => {
        const res = await widget('POST', `/v1/webchat/conversations/${started.body.conversation_id}/escalate`, { message: 'Is anyone there?' }, started.body.visitor_token);
        expect(res.status).toBe(200);
        return res.body.reply as string;
      };
      await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' });
      expect(await askAgain()).toBe(phrase('handoff_waiting', 'en'));
      const handledBy = async () => (await get().db.selectFrom('sessions').select('handled_by').where('external_id', '=', started.body.conversation_id).executeTakeFirstOrThrow()).handled_by;
      await expect.poll(handledBy, { timeout: 5_000 }).toBe('waiting');
      // Waiting now: asked again while an agent is available, a colleague will reply.
      expect(await askAgain()).toBe(phrase('handoff_waiting', 'en'));
      const tomorrow = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][(new Date().getUTCDay() + 1) % 7]!;
      expect((await api(a, 'PUT', '/v1/phone', ws.owner, { numbers: [], team_hours: { time_zone: 'UTC', week: { [tomorrow]: [['09:00', '10:00']] } } })).status).toBe(200);
      try {
        // Outside the team hours: until when the team is away, not that it is "not available right now".
        expect(await askAgain()).toBe(awayUntilPhrase('handoff_waiting_until', 'en', { day: tomorrow, time: '09:00', today: false }));
      } finally {
        expect((await api(a, 'PUT', '/v1/phone', ws.owner, { numbers: [], team_hours: null })).status).toBe(200);
      }
      // Nobody available, no hours: the team replies when it is back.
      await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'away' });
      expect(await askAgain()).toBe(phrase('handoff_waiting_closed', 'en'));
    });

    it('says until when in Dutch, German and French too', () => {
      const opening = { day: 'mon', time: '09:00', today: false };
      expect(awayUntilPhrase('handoff_waiting_until', 'en', opening)).toBe('The team is away until Monday 09:00; they will reply to you here then.');
      expect(awayUntilPhrase('handoff_waiting_until', 'nl', opening)).toBe('Het team is afwezig tot maandag 09:00; zij antwoorden u dan hier.');
      expect(awayUntilPhrase('handoff_waiting_until', 'de-DE', opening)).toBe('Das Team ist bis Montag 09:00 nicht erreichbar; es antwortet Ihnen dann hier.');
      expect(awayUntilPhrase('handoff_waiting_until', 'fr', { ...opening, today: true })).toBe("L'équipe est absente jusqu'à 09:00 ; elle vous répondra ici à son retour.");
    });
  });

  describe("a change reaches the workspace's open dashboards on every engine, and no other workspace's", () => {
    it('set on engine a, lapsed by the sweep, or closed by PUT /v1/team: the owner\'s stream on engine b hears each', async () => {
      const other = await seedWorkspace(a, 'Nextdoor');
      await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'away' });
      const owner = followEvents(b, ws.owner, '/v1/inbox/events', 'presence');
      const stranger = followEvents(b, other.owner, '/v1/inbox/events', 'presence');
      const strangerOnA = followEvents(a, other.owner, '/v1/inbox/events', 'presence');
      // What the stream heard of the agent after the warm-up below (anything of before it has arrived by then: engine a
      // writes its events in order, and engine b reads them in order).
      let heardBefore = 0;
      const ofAgent = () => owner.events.slice(heardBefore).filter((e) => e.user_id === ws.agentId);
      try {
        // The stream's watch reaches engine a within the live bus's refresh: until the stream hears, the admin's own
        // status is set again on engine a.
        await expect.poll(async () => {
          await api(a, 'PUT', '/v1/me/presence', ws.admin, { status: 'offline' });
          return owner.events.length;
        }, { timeout: 10_000, interval: 200 }).toBeGreaterThan(0);
        expect(owner.answered.status).toBe(200);
        expect(owner.events).toContainEqual({ user_id: ws.adminId, name: 'Admin', status: 'offline' });
        heardBefore = owner.events.length;

        // Set on engine a.
        expect((await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' })).status).toBe(200);
        await expect.poll(() => ofAgent().length, { timeout: 5_000 }).toBe(1);
        expect(ofAgent()).toEqual([{ user_id: ws.agentId, name: 'Agent', status: 'available' }]);

        // Lapsed: no dashboard of the agent's for the idle time; the sweep (of either engine) writes it and says so.
        await lastSeenAgo(ws.agentId, 6);
        await expect.poll(() => ofAgent().length, { timeout: 5_000 }).toBe(2);
        expect(ofAgent()[1]).toEqual({ user_id: ws.agentId, name: 'Agent', status: 'away' });

        // PUT /v1/team false on engine a: everyone available becomes away, each said once.
        await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' });
        await expect.poll(() => ofAgent().length, { timeout: 5_000 }).toBe(3);
        expect((await api(a, 'PUT', '/v1/team', ws.owner, { available: false })).status).toBe(200);
        await expect.poll(() => ofAgent().length, { timeout: 5_000 }).toBe(4);
        expect(ofAgent().map((e) => e.status)).toEqual(['available', 'away', 'available', 'away']);
        // A change next door is heard next door only: once it is heard there, the first workspace's streams had it too.
        await expect.poll(async () => {
          await api(a, 'PUT', '/v1/me/presence', other.agent, { status: 'available' });
          return stranger.events.length;
        }, { timeout: 10_000, interval: 200 }).toBeGreaterThan(0);
      } finally {
        await owner.stop();
        await stranger.stop();
        await strangerOnA.stop();
      }
      expect(owner.events.some((e) => e.user_id === other.agentId)).toBe(false);
      expect([...stranger.events, ...strangerOnA.events].every((e) => e.user_id === other.agentId)).toBe(true);
      expect(strangerOnA.events.length).toBeGreaterThan(0);
    });
  });

  describe('PUT /v1/team, kept for API clients', () => {
    it('true makes the caller available; false makes everyone who is available away', async () => {
      await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'away' });
      expect((await api(a, 'PUT', '/v1/team', ws.admin, { available: true })).body).toEqual({ available: true, available_now: true });
      expect(await statusOf(b, ws.adminId)).toBe('available');
      await api(a, 'PUT', '/v1/me/presence', ws.agent, { status: 'available' });
      expect((await api(b, 'PUT', '/v1/team', ws.owner, { available: false })).body).toEqual({ available: false, available_now: false });
      expect(await statusOf(a, ws.adminId)).toBe('away');
      expect(await statusOf(a, ws.agentId)).toBe('away');
    });
  });
});
