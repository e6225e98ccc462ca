/**
 * The phone channel end to end: a real `ws` client plays Twilio's side of ConversationRelay against the real service,
 * whose integrator is a real HTTPS server on loopback (test CA).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { twilioSignature } from '../../../src/channels/phone/twilio-signature.ts';
import { describeEachDatabase } from '../../helpers/db.ts';
import { sendJson, startHttpsServer, type TestHttpsServer } from '../../helpers/https-server.ts';
import { BRIDGE_TOKEN, Caller, NUMBER } from '../../helpers/phone-caller.ts';
import { seedWorkspace, startTestService, type TestService } from '../../helpers/service.ts';

const TWILIO_TOKEN = 'twilio-auth-token-for-tests';
const PUBLIC_URL = 'https://botlink.example.com';
// Well above a quick answer's time even on a loaded CI machine, where a quick answer once took 1.5 s: the tests that
// are not about the filler read the answer with caller.answer(), which passes over a filler.
const FILLER_MS = 1_000;
/** The integrator answers messages containing "slow" after this long. */
const SLOW_MS = 2_000;

/** The HTTP status an upgrade is answered with (101 when it opened). */
function upgradeStatus(service: TestService, headers: Record<string, string>, query = ''): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${service.url.replace('http', 'ws')}/v1/phone/ws${query}`, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', reject);
  });
}

function form(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

async function postTwilio(service: TestService, path: string, params: Record<string, string>, signature?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (signature !== undefined) headers['x-twilio-signature'] = signature;
  const res = await fetch(service.url + path, { method: 'POST', headers, body: form(params) });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** An integrator: "slow" waits SLOW_MS, "person" asks for a human handoff, anything else is answered. */
async function startIntegrator(): Promise<TestHttpsServer> {
  return startHttpsServer(async (req, res, body) => {
    if (req.method === 'GET') return sendJson(res, 200, { tools: [] }); // the tool manifest: none
    const message = JSON.parse(body.toString()).message as string;
    if (message.includes('slow')) await new Promise((r) => setTimeout(r, SLOW_MS));
    if (message.includes('person')) return sendJson(res, 200, { reply: 'Of course.', handoff: 'human' });
    sendJson(res, 200, { reply: `Answer to: ${message}` });
  });
}

describeEachDatabase('phone channel (ConversationRelay)', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  let clock = Date.now;
  const callers: Caller[] = [];
  let seq = 0;
  const callSid = () => `CA${Date.now()}${seq++}`;
  const open = async (options?: Parameters<typeof Caller.connect>[1]) => {
    const caller = await Caller.connect(service, options);
    callers.push(caller);
    return caller;
  };
  const session = (sid: string) => service.database.db.selectFrom('sessions').selectAll().where('external_id', '=', sid).executeTakeFirst();
  const metric = async (name: string) => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    return text.split('\n').filter((l) => l.startsWith(name)).join('\n');
  };

  beforeAll(async () => {
    integrator = await startIntegrator();
    service = await startTestService(
      get(),
      { BRIDGE_TOKEN, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, PUBLIC_URL },
      { phone: { fillerMs: FILLER_MS, dtmfEntryMs: 100, pingMs: 1_000, now: () => clock() } },
    );
    ws = await seedWorkspace(service);
    await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
    const put = await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: ['+31 20 123 4567'], transfer_number: '+31 20 765 4321', language: 'en-US' } });
    expect(put.status).toBe(200);
  });
  afterEach(async () => {
    clock = Date.now;
    for (const c of callers.splice(0)) c.ws.terminate();
    await service.api('PUT', '/v1/team', { token: ws.owner, body: { available: false } });
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });

  describe('a call', () => {
    it('setup then a prompt: the answer comes as one text frame with last:true, and the session is the call', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('Where is my order?');
      expect(await caller.answer()).toEqual({ type: 'text', token: 'Answer to: Where is my order?', last: true, lang: 'en-US' });
      const request = JSON.parse(integrator.requests.findLast((r) => r.method === 'POST')!.body.toString());
      expect(request).toMatchObject({ channel: 'phone', session_id: sid, message: 'Where is my order?', language: 'en', customer: { phone: '+31612345678' } });
      const row = await until(() => session(sid), (r) => r?.turn_count === 1);
      expect(row).toMatchObject({ workspace_id: ws.workspaceId, channel: 'phone', customer_phone: '+31612345678', turn_count: 1 });
    });

    it('the tools manifest is fetched when the call is set up, before the caller says anything', async () => {
      // Saving the integration again drops the cached manifest (any earlier call of this suite filled it).
      await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
      const manifestGets = () => integrator.requests.filter((r) => r.method === 'GET' && r.url === '/botlink/tools/manifest').length;
      const before = manifestGets();
      const caller = await open();
      caller.setup(callSid());
      expect(await until(async () => manifestGets(), (n) => n > before)).toBe(before + 1);
      caller.say('Where is my order?');
      expect(await caller.answer()).toMatchObject({ type: 'text', token: 'Answer to: Where is my order?', last: true });
      expect(manifestGets()).toBe(before + 1); // the turn used the manifest fetched at setup
    });

    it('a call to a number no workspace answers hears an apology, then end', async () => {
      const caller = await open();
      caller.setup(callSid(), '+19995550100');
      expect(await caller.next()).toMatchObject({ type: 'text', last: true, token: expect.stringContaining('cannot take calls') });
      expect(await caller.next()).toEqual({ type: 'end' });
    });

    it('partial prompts are joined into one turn once the utterance is final', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('Where is', false);
      caller.say('my parcel?', true);
      expect((await caller.answer()).token).toContain('Answer to: Where is my parcel?');
      const sent = integrator.requests.filter((r) => r.method === 'POST' && r.body.toString().includes(sid));
      expect(sent.map((r) => JSON.parse(r.body.toString()).message)).toEqual(['Where is my parcel?']);
    });

    it('a language change is told to the bridge and the bot link asks in the new language', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('Hello');
      await caller.answer();
      caller.say('Waar is mijn pakket?', true, 'nl-NL');
      expect(await caller.next()).toEqual({ type: 'language', ttsLanguage: 'nl-NL', transcriptionLanguage: 'nl-NL' });
      expect(await caller.answer()).toMatchObject({ lang: 'nl-NL' });
      expect(JSON.parse(integrator.requests.findLast((r) => r.body.toString().includes(sid))!.body.toString()).language).toBe('nl');
    });
  });

  describe('no dead air', () => {
    it('a slow answer is preceded by one preemptible filler in the caller\'s language', async () => {
      const caller = await open();
      caller.setup(callSid());
      const t0 = Date.now();
      caller.say('slow question', true, 'nl-NL');
      const filler = await caller.next();
      expect(filler).toEqual({ type: 'text', token: 'Een moment, ik zoek het even voor u op.', last: true, lang: 'nl-NL', preemptible: true });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(FILLER_MS - 20);
      expect((await caller.next()).token).toContain('Answer to: slow question');
      expect(caller.frames).toEqual([]); // once a turn
      expect(await metric('phone_fillers_total')).toMatch(/phone_fillers_total [1-9]/);
    });

    it('a quick answer has no filler', async () => {
      const caller = await open();
      caller.setup(callSid());
      caller.say('quick one');
      expect((await caller.next()).preemptible).toBeUndefined();
    });
  });

  describe('barge-in', () => {
    it('an interrupt during a slow answer: that answer is never sent', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('slow question');
      await new Promise((r) => setTimeout(r, 100));
      caller.send({ type: 'interrupt', utteranceUntilInterrupt: '', durationUntilInterruptMs: 0 });
      await new Promise((r) => setTimeout(r, SLOW_MS + 300));
      expect(caller.frames).toEqual([]); // neither the filler nor the stale answer
      caller.say('next question');
      expect((await caller.answer()).token).toContain('Answer to: next question');
      const turns = await until(() => service.database.db.selectFrom('session_turns').innerJoin('sessions', 'sessions.id', 'session_turns.session_id').select(['session_turns.status']).where('sessions.external_id', '=', sid).execute(), (t) => t.length === 2);
      expect(turns.map((t) => t.status).sort()).toEqual(['cancelled', 'completed']);
    });

    it('a new prompt during a slow answer: only the newer question is answered', async () => {
      const caller = await open();
      caller.setup(callSid());
      caller.say('slow question');
      await new Promise((r) => setTimeout(r, 100));
      caller.say('never mind, opening hours?');
      expect((await caller.answer()).token).toContain('Answer to: never mind, opening hours?');
      await new Promise((r) => setTimeout(r, SLOW_MS));
      expect(caller.frames.filter((f) => f.type === 'text' && !f.preemptible)).toEqual([]);
    });
  });

  describe('handoff', () => {
    it('a human handoff while the team is available: the sentence, then end with handoffData reason human', async () => {
      await service.api('PUT', '/v1/team', { token: ws.owner, body: { available: true } });
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('I want a person');
      expect((await caller.answer()).token).toContain("I'll connect you with a colleague.");
      const end = await caller.next();
      expect(end.type).toBe('end');
      expect(JSON.parse(end.handoffData)).toMatchObject({ reason: 'human', session_id: (await session(sid))!.id });
      expect((await caller.closed).code).toBe(1000); // we close after the end frame if the bridge does not
      expect(await until(() => session(sid), (r) => r?.status === 'ended')).toMatchObject({ status: 'ended' });
    });

    it('a human handoff while the team is not available: the team follows up, the call goes on', async () => {
      const caller = await open();
      caller.setup(callSid());
      caller.say('I want a person');
      expect((await caller.answer()).token).toContain('The team is not available right now');
      caller.say('ok thanks');
      expect((await caller.answer()).token).toContain('Answer to: ok thanks');
    });

    it('dtmf 0 asks for a person: connected while the team is available', async () => {
      await service.api('PUT', '/v1/team', { token: ws.owner, body: { available: true } });
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.send({ type: 'dtmf', digit: '0' });
      expect(await caller.answer()).toMatchObject({ type: 'text', token: "I'll connect you with a colleague." });
      const end = await caller.next();
      expect(JSON.parse(end.handoffData)).toMatchObject({ reason: 'human', requested_by: 'dtmf' });
      caller.close();
      const row = await until(() => session(sid), (r) => r?.status === 'ended' && r.handoff != null);
      expect(row!.handoff).toMatchObject({ kind: 'human', connected: true });
      expect(integrator.requests.some((r) => r.body.toString().includes(sid))).toBe(false); // no bot-link turn
    });

    it('dtmf 0 while the team is not available: told so, and the team gets a follow-up', async () => {
      const caller = await open();
      caller.setup(callSid());
      caller.send({ type: 'dtmf', digit: '0' });
      expect((await caller.answer()).token).toContain('The team is not available right now');
      // The follow-up is written right after the sentence goes out.
      const notes = await until(() => service.api('GET', '/v1/notifications', { token: ws.agent }), (n) => n.body.notifications[0]?.message.includes('pressed 0'));
      expect(notes.body.notifications[0]).toMatchObject({ kind: 'human_followup', message: expect.stringContaining('pressed 0') });
    });

    it('other keys are an entry, said as the message once # is pressed', async () => {
      const caller = await open();
      caller.setup(callSid());
      for (const digit of ['0', '1', '2', '3', '#']) caller.send({ type: 'dtmf', digit });
      expect((await caller.answer()).token).toContain('Answer to: 0123');
    });
  });

  describe('robustness', () => {
    it('garbage, unknown and oversized frames are dropped and counted; the call goes on', async () => {
      const caller = await open();
      caller.setup(callSid());
      caller.send('{this is not json');
      caller.send({ type: 'teleport', to: 'mars' });
      caller.send({ type: 'prompt', voicePrompt: 42 });
      caller.send({ type: 'prompt', voicePrompt: 'x'.repeat(100 * 1024) }); // above 64 KB: dropped
      caller.ws.send(Buffer.from([1, 2, 3])); // binary
      caller.say('still there?');
      expect((await caller.answer()).token).toContain('Answer to: still there?');
      const dropped = await metric('phone_frames_dropped_total');
      for (const reason of ['invalid_json', 'unknown_type', 'invalid_fields', 'too_large', 'binary']) expect(dropped).toContain(`reason="${reason}"`);
      expect(caller.frames).toEqual([]); // never an error frame
    });

    it('a flood of 5,000 prompts on one call costs a handful of turns, merged and counted; the last words are answered', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      await until(() => session(sid), (r) => r !== undefined);
      for (let i = 0; i < 5_000; i++) caller.say(`flood ${i}`);
      caller.say('the real question');
      // The integrator is asked with the caller's latest words (the merged flood's tail), and the answer is spoken.
      const asked = () => integrator.requests.filter((r) => r.method === 'POST').map((r) => JSON.parse(r.body.toString()) as { session_id: string; message: string }).filter((r) => r.session_id === sid);
      await until(async () => asked(), (requests) => requests.some((r) => r.message.endsWith('the real question')), 10_000);
      expect((await caller.next((f) => f.type === 'text' && !f.preemptible && f.last === true, 10_000)).token).toMatch(/^Answer to: /);
      expect(asked().length).toBeLessThan(20);
      const health = performance.now();
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      expect(performance.now() - health).toBeLessThan(1_000);
      const row = await until(() => session(sid), (r) => (r?.turn_count ?? 0) > 0);
      expect(row!.turn_count).toBeLessThan(20);
      expect(await metric('phone_prompts_merged_total')).toMatch(/phone_prompts_merged_total \d{4}/);
    });

    it('a frame beyond the hard limit (256 KB) closes the socket with 1009 and the session ends', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('hello');
      await caller.answer();
      caller.say('y'.repeat(300 * 1024));
      expect((await caller.closed).code).toBe(1009);
      expect(await until(() => session(sid), (r) => r?.status === 'ended')).toMatchObject({ status: 'ended' });
    });

    it('a dropped socket ends the session in the database, even mid-turn', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('slow question');
      await new Promise((r) => setTimeout(r, 100));
      caller.ws.terminate();
      expect(await until(() => session(sid), (r) => r?.status === 'ended')).toMatchObject({ status: 'ended', state: 'ended' });
    });

    it('a call that was silent long enough to be passivated still ends its session when it closes', async () => {
      const caller = await open();
      const sid = callSid();
      caller.setup(sid);
      caller.say('hello');
      await caller.answer();
      await service.runtime.settled();
      await service.runtime.passivateIdle(Date.now() + 3_600_000);
      caller.close();
      expect(await until(() => session(sid), (r) => r?.status === 'ended')).toMatchObject({ status: 'ended', turn_count: 1 });
    });

    it('a bridge that stops answering pings is terminated and its session ended', async () => {
      const caller = await open({ autoPong: false });
      const sid = callSid();
      caller.setup(sid);
      await until(() => session(sid), (r) => r != null);
      // The client never pongs; after a ping interval without an answer the server terminates the socket.
      await caller.closed;
      expect(await until(() => session(sid), (r) => r?.status === 'ended')).toMatchObject({ status: 'ended' });
    });
  });

  describe('who may connect', () => {
    const wsUrl = `${PUBLIC_URL.replace('https', 'wss')}/v1/phone/ws`;

    it('a wrong or missing bearer token is refused with 401 before any socket exists', async () => {
      expect(await upgradeStatus(service, {})).toBe(401);
      expect(await upgradeStatus(service, { authorization: 'Bearer wrong-token-0123456789abcdef0123456789' })).toBe(401);
      expect(await upgradeStatus(service, { authorization: `Bearer ${BRIDGE_TOKEN}` })).toBe(101);
      expect(await metric('phone_upgrades_refused_total{reason="unauthorized"}')).toMatch(/ [2-9]$|\d\d$/);
    });

    it("Twilio's signature over the wss:// URL is accepted; a tampered one is refused", async () => {
      const query = `?issued=${Math.floor(Date.now() / 1000)}`;
      const signature = twilioSignature(TWILIO_TOKEN, wsUrl + query);
      expect(await upgradeStatus(service, { 'x-twilio-signature': signature }, query)).toBe(101);
      expect(await upgradeStatus(service, { 'x-twilio-signature': signature.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')) }, query)).toBe(401);
      expect(await upgradeStatus(service, { 'x-twilio-signature': signature }, `?issued=${Math.floor(Date.now() / 1000) + 1}`)).toBe(401);
      // An old URL (a captured signature replayed later) is refused although its signature is right.
      const old = `?issued=${Math.floor(Date.now() / 1000) - 3600}`;
      expect(await upgradeStatus(service, { 'x-twilio-signature': twilioSignature(TWILIO_TOKEN, wsUrl + old) }, old)).toBe(401);
    });

    it("Twilio's signature over the URL with the default port written out (wss://host:443/…) is accepted too", async () => {
      const query = `?issued=${Math.floor(Date.now() / 1000)}`;
      const withPort = wsUrl.replace(/^(wss:\/\/[^/]+)/, '$1:443');
      expect(withPort).toContain(':443/');
      expect(await upgradeStatus(service, { 'x-twilio-signature': twilioSignature(TWILIO_TOKEN, withPort + query) }, query)).toBe(101);
      expect(await upgradeStatus(service, { 'x-twilio-signature': twilioSignature(TWILIO_TOKEN, wsUrl.replace(/^(wss:\/\/[^/]+)/, '$1:8443') + query) }, query)).toBe(401);
    });

    it('a call connected with a Twilio signature works like any other', async () => {
      const query = `?issued=${Math.floor(Date.now() / 1000)}`;
      const caller = await open({ headers: { 'x-twilio-signature': twilioSignature(TWILIO_TOKEN, wsUrl + query) }, query });
      caller.setup(callSid());
      caller.say('hi');
      expect((await caller.answer()).token).toContain('Answer to: hi');
    });
  });

  describe('TwiML webhooks (signature on)', () => {
    const voiceUrl = `${PUBLIC_URL}/v1/phone/twilio/voice`;
    const actionUrl = `${PUBLIC_URL}/v1/phone/twilio/action`;
    const params = { AccountSid: 'AC1', CallSid: 'CA-twiml', From: '+31612345678', To: NUMBER, CallStatus: 'ringing' };

    it('voice: a signed request gets TwiML connecting the call to the WebSocket; unsigned or tampered gets 401', async () => {
      const ok = await postTwilio(service, '/v1/phone/twilio/voice', params, twilioSignature(TWILIO_TOKEN, voiceUrl, params));
      expect(ok.status).toBe(200);
      expect(ok.type).toContain('text/xml');
      expect(ok.text).toMatch(/<Connect action="https:\/\/botlink\.example\.com\/v1\/phone\/twilio\/action"><ConversationRelay url="wss:\/\/botlink\.example\.com\/v1\/phone\/ws\?issued=\d+" language="en-US" dtmfDetection="true"/);
      expect((await postTwilio(service, '/v1/phone/twilio/voice', params)).status).toBe(401);
      const tampered = { ...params, To: '+31201234568' };
      expect((await postTwilio(service, '/v1/phone/twilio/voice', tampered, twilioSignature(TWILIO_TOKEN, voiceUrl, params))).status).toBe(401);
    });

    it('voice: a signature over https://host:443/… (the default port written out) is accepted', async () => {
      const ok = await postTwilio(service, '/v1/phone/twilio/voice', params, twilioSignature(TWILIO_TOKEN, voiceUrl.replace('.com/', '.com:443/'), params));
      expect(ok.status).toBe(200);
    });

    it('voice: a number no workspace answers gets an apology and a hang-up', async () => {
      const unknown = { ...params, To: '+19995550100' };
      const res = await postTwilio(service, '/v1/phone/twilio/voice', unknown, twilioSignature(TWILIO_TOKEN, voiceUrl, unknown));
      expect(res.text).toMatch(/<Say language="en-US">Sorry[^<]*<\/Say><Hangup\/>/);
    });

    it('action after a human handoff: Dial the transfer number while the team is available, else goodbye and a follow-up', async () => {
      const human = { ...params, HandoffData: JSON.stringify({ reason: 'human', session_id: 's' }), SessionStatus: 'ended' };
      const sign = (p: Record<string, string>) => twilioSignature(TWILIO_TOKEN, actionUrl, p);
      await service.api('PUT', '/v1/team', { token: ws.owner, body: { available: true } });
      expect((await postTwilio(service, '/v1/phone/twilio/action', human, sign(human))).text).toContain('<Dial>+31207654321</Dial>');
      await service.api('PUT', '/v1/team', { token: ws.owner, body: { available: false } });
      const goodbye = await postTwilio(service, '/v1/phone/twilio/action', human, sign(human));
      expect(goodbye.text).toMatch(/<Say language="en-US">The team is not available right now[^<]*<\/Say><Hangup\/>/);
      const notes = await service.api('GET', '/v1/notifications', { token: ws.agent });
      expect(notes.body.notifications[0]).toMatchObject({ kind: 'human_followup', message: expect.stringContaining('no longer available') });

      const forward = { ...params, HandoffData: JSON.stringify({ reason: 'forward', session_id: 's' }) };
      expect((await postTwilio(service, '/v1/phone/twilio/action', forward, sign(forward))).text).toMatch(/<Say[^>]*>Thank you for calling\. Goodbye\.<\/Say><Hangup\/>/);
      const reconnect = { ...params, HandoffData: JSON.stringify({ reason: 'reconnect', session_id: 's' }) };
      expect((await postTwilio(service, '/v1/phone/twilio/action', reconnect, sign(reconnect))).text).toContain('<ConversationRelay url="wss://botlink.example.com/v1/phone/ws?issued=');
      const none = { ...params, SessionStatus: 'completed' };
      expect((await postTwilio(service, '/v1/phone/twilio/action', none, sign(none))).text).toContain('<Response><Hangup/></Response>');
      expect((await postTwilio(service, '/v1/phone/twilio/action', human)).status).toBe(401);
    });
  });

  describe('PUT /v1/phone', () => {
    it('normalises numbers, answers the settings, and is for owners and admins only', async () => {
      const res = await service.api('GET', '/v1/phone', { token: ws.admin });
      expect(res.body).toMatchObject({ numbers: [NUMBER], transfer_number: '+31207654321', team_hours: null, language: 'en-US', team_available: false, available_now: false });
      expect((await service.api('GET', '/v1/phone', { token: ws.agent })).status).toBe(403);
      expect((await service.api('PUT', '/v1/phone', { token: ws.agent, body: { numbers: [] } })).status).toBe(403);
    });

    it('refuses numbers, zones and hours that are not valid, naming the field', async () => {
      const bad = async (body: unknown) => (await service.api('PUT', '/v1/phone', { token: ws.owner, body })).body.error;
      expect(await bad({ numbers: ['020 123 4567'] })).toMatchObject({ code: 'validation_failed', details: [{ field: 'numbers.0' }] });
      expect(await bad({ numbers: [NUMBER], transfer_number: 'call me' })).toMatchObject({ details: [{ field: 'transfer_number' }] });
      expect(await bad({ numbers: [NUMBER], team_hours: { time_zone: 'Europe/Atlantis', week: {} } })).toMatchObject({ details: [{ field: 'team_hours.time_zone' }] });
      expect(await bad({ numbers: [NUMBER], team_hours: { time_zone: 'UTC', week: { mon: [['17:00', '09:00']] } } })).toMatchObject({ details: [{ field: 'team_hours.week.mon.0' }] });
      expect(await bad({ numbers: [NUMBER], team_hours: { time_zone: 'UTC', week: { someday: [] } } })).toMatchObject({ code: 'validation_failed' });
      expect(await bad({ numbers: [NUMBER], extra: 1 })).toMatchObject({ code: 'validation_failed' });
      expect((await service.api('GET', '/v1/phone', { token: ws.owner })).body.numbers).toEqual([NUMBER]); // unchanged
    });

    it('a number another workspace answers is 409 and changes nothing', async () => {
      const other = await seedWorkspace(service, 'Other');
      const res = await service.api('PUT', '/v1/phone', { token: other.owner, body: { numbers: ['+44 20 7946 0000', NUMBER] } });
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'conflict', details: [{ field: 'numbers.1' }] });
      expect((await service.api('GET', '/v1/phone', { token: other.owner })).body.numbers).toEqual([]);
      expect((await service.api('PUT', '/v1/phone', { token: other.owner, body: { numbers: ['+442079460000'] } })).status).toBe(200);
    });

    it('team hours decide, with presence, whether a human handoff connects (clock injected)', async () => {
      const hours = { time_zone: 'Europe/Amsterdam', week: { mon: [['09:00', '17:30']] } };
      const put = await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: [NUMBER], transfer_number: '+31207654321', team_hours: hours } });
      expect(put.body.team_hours).toEqual(hours);
      await service.api('PUT', '/v1/team', { token: ws.owner, body: { available: true } });
      try {
        clock = () => Date.parse('2026-06-01T15:15:00Z'); // Monday 17:15 in Amsterdam (summer time)
        expect((await service.api('GET', '/v1/phone', { token: ws.owner })).body.available_now).toBe(true);
        clock = () => Date.parse('2026-06-01T15:45:00Z'); // Monday 17:45: closed
        expect((await service.api('GET', '/v1/phone', { token: ws.owner })).body).toMatchObject({ team_available: true, available_now: false });
        // The session runtime's handoff uses the same rule: outside the hours a person is not connected, and the caller
        // hears until when the team is away (the next opening, Monday 09:00 in Amsterdam).
        const caller = await open();
        caller.setup(callSid());
        caller.say('I want a person');
        expect((await caller.answer()).token).toContain('The team is away until Monday 09:00; they will follow up with you.');
        // Twilio's action after a relay that ended with a human handoff asks again and says the same: the hours may have
        // ended between the promise and the dial.
        const actionUrl = `${PUBLIC_URL}/v1/phone/twilio/action`;
        const human = { AccountSid: 'AC1', CallSid: 'CA-hours', From: '+31612345678', To: NUMBER, HandoffData: JSON.stringify({ reason: 'human', session_id: 's' }), SessionStatus: 'ended' };
        const action = await postTwilio(service, '/v1/phone/twilio/action', human, twilioSignature(TWILIO_TOKEN, actionUrl, human));
        expect(action.text).toMatch(/<Say language="en-US">The team is away until Monday 09:00; they will follow up with you\.<\/Say><Hangup\/>/);
        clock = () => Date.parse('2026-06-01T15:15:00Z'); // open again, with someone available: Dial as before
        expect((await postTwilio(service, '/v1/phone/twilio/action', human, twilioSignature(TWILIO_TOKEN, actionUrl, human))).text).toContain('<Dial>+31207654321</Dial>');
      } finally {
        await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: [NUMBER], transfer_number: '+31207654321' } });
      }
    });
  });
});

describeEachDatabase('phone channel without TWILIO_AUTH_TOKEN and BRIDGE_TOKEN', (get) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService(get(), { PUBLIC_URL });
    const ws = await seedWorkspace(service);
    await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: [NUMBER], greeting: 'Welcome to Acme & co.' } });
  });
  afterAll(() => service.stop());

  it('refuses every WebSocket upgrade (safe default) with 401', async () => {
    expect(await upgradeStatus(service, {})).toBe(401);
    expect(await upgradeStatus(service, { authorization: `Bearer ${BRIDGE_TOKEN}` })).toBe(401);
  });

  it('answers the TwiML webhooks without a signature (signature off)', async () => {
    const res = await postTwilio(service, '/v1/phone/twilio/voice', { CallSid: 'CA1', From: '+31612345678', To: NUMBER });
    expect(res.status).toBe(200);
    expect(res.text).toContain('welcomeGreeting="Welcome to Acme &amp; co."');
    // No transfer number: a human handoff cannot be dialled, so the caller hears the team will follow up.
    const action = await postTwilio(service, '/v1/phone/twilio/action', { CallSid: 'CA1', To: NUMBER, HandoffData: '{"reason":"human","session_id":"s"}' });
    expect(action.text).toContain('<Hangup/>');
  });

  it('other upgrade paths get 404', async () => {
    const status = await new Promise<number>((resolve) => {
      const client = new WebSocket(`${service.url.replace('http', 'ws')}/v1/elsewhere`);
      client.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      client.on('error', () => resolve(0));
    });
    expect(status).toBe(404);
  });
});

describeEachDatabase('phone channel on SIGTERM', (get) => {
  it('a turn in flight is answered, then the call is handed back (end reason reconnect, close 1001) and kept', async () => {
    const integrator = await startIntegrator();
    const service = await startTestService(get(), { BRIDGE_TOKEN, PUBLIC_URL }, { drainMs: SLOW_MS + 3_000, phone: { fillerMs: 5_000 } });
    try {
      const ws = await seedWorkspace(service);
      await service.api('PUT', '/v1/integration', { token: ws.owner, body: { endpoint_url: `${integrator.origin}/botlink/channel` } });
      await service.api('PUT', '/v1/phone', { token: ws.owner, body: { numbers: [NUMBER] } });
      const caller = await Caller.connect(service);
      caller.setup('CA-drain');
      caller.say('slow question');
      // In flight: the integrator has the question (and answers it SLOW_MS later).
      await until(async () => integrator.requests.some((r) => r.method === 'POST'), (asked) => asked);
      const stopping = service.stop();
      expect((await caller.answer()).token).toContain('Answer to: slow question');
      const end = await caller.next();
      expect(JSON.parse(end.handoffData)).toMatchObject({ reason: 'reconnect' });
      expect((await caller.closed).code).toBe(1001);
      await stopping;
      const row = await get().db.selectFrom('sessions').selectAll().where('external_id', '=', 'CA-drain').executeTakeFirst();
      // Kept for the reconnect: the turn is written and the session is still open.
      expect(row).toMatchObject({ status: 'active', turn_count: 1 });
    } finally {
      await service.stop();
      await integrator.close();
    }
  });
});
