/**
 * Replay (docs/integrators.md "Try a new version: replay"): a workspace's last customer messages, from its
 * stored turns, sent signed to a candidate endpoint through the real HTTP API, each answer beside the live one.
 */
import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { SESSION_MACHINE_VERSION } from '../../machines/session-types.ts';
import { REPLAYS_PER_MINUTE } from '../../src/integration/replay.ts';
import { summary } from '../../src/sessions/turn-record.ts';
import { until } from '../channels/whatsapp/fixtures/harness.ts';
import { runCli } from '../helpers/cli.ts';
import { describeEachDatabase, type TestDatabase } from '../helpers/db.ts';
import { refuseUnsigned, sendJson, startHttpsServer, type TestHttpsServer } from '../helpers/https-server.ts';
import { createLogger } from '../../src/log.ts';
import { seedWorkspace, startTestService, type TestService } from '../helpers/service.ts';

const CANDIDATE_KEY = 'candidate-key-0123456789-abcdefghijklmnopq';
const LIVE_KEY = 'live-key-0123456789-abcdefghijklmnopqrstuvw';

/** What the live endpoint answered then, as the turns stored it; and what the candidate answers now. */
const conversations = [
  {
    channel: 'whatsapp' as const,
    externalId: 'wa-conversation-1',
    phone: '+31612345678',
    language: 'nl',
    turns: [
      { message: 'Waar is order 1234?', live: summary({ outcome: 'answer', reason: 'answer', reply: 'Order 1234 wordt morgen bezorgd.', handled: true }) },
      { message: 'Kan ik mijn schoenen retourneren?', live: summary({ outcome: 'answer', reason: 'answer', reply: 'Ja, binnen 30 dagen.', handled: true }) },
    ],
  },
  {
    channel: 'phone' as const,
    externalId: 'CA-call-1',
    phone: '+31201234567',
    language: 'en',
    turns: [{ message: 'When are you open?', live: summary({ outcome: 'answer', reason: 'answer', reply: 'We are open 9 to 5.', handled: false }) }],
  },
  {
    channel: 'whatsapp' as const,
    externalId: 'wa-conversation-2',
    phone: null,
    language: 'en',
    turns: [{ message: 'Do you ship to Belgium?', live: summary({ outcome: 'no_answer', reason: 'timeout' }) }],
  },
];

/** The new version: a changed answer, a failure where live answered, the same answer, an answer where live had none. */
function candidate(key: string, delayMs = 0) {
  return async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    if (refuseUnsigned(key, req, res, body)) return;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const { message } = JSON.parse(body.toString('utf8')) as { message: string };
    if (message.startsWith('Waar is order')) return sendJson(res, 200, { reply: 'Order 1234 is vandaag verzonden.', handled: true });
    if (message.startsWith('Kan ik')) return sendJson(res, 500, { error: 'boom' });
    if (message.startsWith('When are you open')) return sendJson(res, 200, { reply: 'We are open 9 to 5.', handled: false });
    sendJson(res, 200, { reply: 'Yes, we ship to Belgium.', handled: true });
  };
}

/** Stores the conversations as the session runtime does (the repository's saveTurns), one minute apart, plus a website chat and a cancelled turn that are never replayed. */
async function storeTurns(database: TestDatabase, workspaceId: string): Promise<void> {
  const sessions = sessionsRepository(database.db);
  let at = Date.now() - 3_600_000;
  const store = async (channel: 'phone' | 'whatsapp' | 'webchat', externalId: string, phone: string | null, language: string, turns: { message: string; live: unknown; status?: 'completed' | 'cancelled' }[]) => {
    const session = await sessions.findOrCreate({ id: randomUUID(), workspace_id: workspaceId, channel, external_id: externalId, language, customer_phone: phone, machine_version: SESSION_MACHINE_VERSION });
    for (const [ordinal, turn] of turns.entries()) {
      at += 60_000;
      await sessions.saveTurns([
        {
          turn: {
            id: randomUUID(), session_id: session.id, ordinal, status: turn.status ?? 'completed', language, customer_message: turn.message,
            reply: 'what the customer heard', source: 'integrator', botlink: turn.live, knowledge: null, tool_rounds: [], handoff: null,
            timings: {}, errors: [], started_at: new Date(at), ended_at: new Date(at + 1_000),
          },
          session: {
            id: session.id, state: 'ended', status: 'ended', language, customer: { phone, email: null, name: null }, handoff: null,
            turnCount: ordinal + 1, snapshot: null, machineVersion: SESSION_MACHINE_VERSION, releaseLease: true, owner: 'replay-test',
          },
        },
      ]);
    }
  };
  await store('webchat', 'chat-1', null, 'en', [{ message: 'A website chat question', live: summary({ outcome: 'no_answer', reason: 'not_configured' }) }]);
  for (const c of conversations) await store(c.channel, c.externalId, c.phone, c.language, c.turns);
  await store('whatsapp', 'wa-cancelled', null, 'en', [{ message: 'A turn that was cut off', live: summary({ outcome: 'no_answer', reason: 'aborted' }), status: 'cancelled' }]);
}

describeEachDatabase('replaying customer messages to a candidate endpoint', (get) => {
  let service: TestService;
  let integrator: TestHttpsServer;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;

  /** The service's log lines (info and above), as JSON. */
  const logged: Record<string, unknown>[] = [];
  beforeAll(async () => {
    integrator = await startHttpsServer(candidate(CANDIDATE_KEY));
    const logger = createLogger('info', { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    service = await startTestService(get(), {}, { logger });
    ws = await seedWorkspace(service);
    await storeTurns(get(), ws.workspaceId);
  });
  afterAll(async () => {
    await service.stop();
    await integrator.close();
  });

  const endpoint = () => `${integrator.origin}/staging/channel`;

  describe('the report', () => {
    let res: Awaited<ReturnType<TestService['api']>>;
    let turnsBefore = 0;
    beforeAll(async () => {
      turnsBefore = (await get().db.selectFrom('session_turns').select('id').execute()).length;
      integrator.requests.length = 0;
      res = await service.api('POST', '/v1/integration/replay', { token: ws.owner, body: { endpoint_url: endpoint(), key: CANDIDATE_KEY, last: 50 } });
    });

    it('shows each phone and WhatsApp message, oldest first, with the live answer beside the candidate\'s', () => {
      expect(res.status).toBe(200);
      expect(res.body.items.map((i: { message: string; verdict: string }) => [i.message, i.verdict])).toEqual([
        ['Waar is order 1234?', 'changed'],
        ['Kan ik mijn schoenen retourneren?', 'now_failing'],
        ['When are you open?', 'same'],
        ['Do you ship to Belgium?', 'now_answering'],
      ]);
      expect(res.body).toMatchObject({ requested: 50, replayed: 4, summary: { same: 1, changed: 1, now_failing: 1, now_answering: 1, still_failing: 0 } });
    });

    it('without a model the replay works as before, and says that the judge of changed answers needs one', () => {
      expect(res.body.judge).toEqual({
        status: 'needs_model',
        message: 'the judge needs a language model, and this service has none (LLM_BASE_URL is not set)',
        better: 0, worse: 0, equal: 0, not_judged: 0,
      });
      expect(res.body.items.map((i: { judge: unknown }) => i.judge)).toEqual([null, null, null, null]);
    });

    it('a changed answer shows both replies', () => {
      expect(res.body.items[0]).toMatchObject({
        channel: 'whatsapp',
        language: 'nl',
        live: { outcome: 'answer', reply: 'Order 1234 wordt morgen bezorgd.', handled: true },
        candidate: { outcome: 'answer', reason: 'answer', reply: 'Order 1234 is vandaag verzonden.', handled: true, http_status: 200 },
      });
    });

    it('a message the candidate fails says why, beside what live answered', () => {
      expect(res.body.items[1]).toMatchObject({
        live: { outcome: 'answer', reply: 'Ja, binnen 30 dagen.' },
        candidate: { outcome: 'no_answer', reason: 'status', reply: null, http_status: 500 },
      });
      expect(res.body.items[3].live).toEqual({ outcome: 'no_answer', reason: 'timeout', reply: null, handled: null, handoff: null });
    });

    it('sends signed channel requests with the stored channel, language and phone, a replay session id and sent_at now', () => {
      const sent = integrator.requests.map((r) => JSON.parse(r.body.toString('utf8')));
      expect(sent).toHaveLength(4);
      expect(sent.find((b) => b.message === 'When are you open?')).toMatchObject({ channel: 'phone', session_id: 'replay-CA-call-1', language: 'en', customer: { phone: '+31201234567' } });
      const conversation = sent.filter((b) => b.session_id === 'replay-wa-conversation-1').map((b) => b.message);
      expect(conversation).toEqual(['Waar is order 1234?', 'Kan ik mijn schoenen retourneren?']);
      for (const body of sent) expect(Math.abs(body.sent_at - Date.now() / 1000)).toBeLessThan(60);
      expect(integrator.requests.every((r) => r.url === '/staging/channel')).toBe(true);
    });

    it('leaves a log line with who sent the messages, of which workspace, to which URL (without its query string)', async () => {
      const lines = logged.filter((l) => l.msg === 'replay: customer messages sent to a candidate endpoint');
      expect(lines).toHaveLength(1);
      const owner = (await service.accounts.authenticate(ws.owner))!;
      expect(lines[0]).toMatchObject({ level: 30, user_id: owner.userId, user_email: owner.email, workspace_id: ws.workspaceId, target: endpoint(), outcome: 'sent', replayed: res.body.replayed });
      await service.api('POST', '/v1/integration/replay', { token: ws.admin, body: { endpoint_url: `${endpoint()}?token=not-for-the-log`, key: 'short', last: 1 } });
      const refused = logged.find((l) => l.msg === 'replay: refused or failed before sending' && l.user_id === (ws.adminId as string));
      expect(refused).toMatchObject({ workspace_id: ws.workspaceId, target: endpoint(), outcome: 'invalid_key' });
      expect(JSON.stringify(logged)).not.toContain('not-for-the-log');
    });

    it('is in the audit log: who sent which workspace\'s messages to which host, never the key, the path or the query', async () => {
      const audit = await service.api('GET', '/v1/audit?limit=200', { token: ws.owner });
      const replays = (audit.body.entries as { action: string; user_email: string | null; target: string | null }[]).filter((e) => e.action === 'customer_messages_replayed');
      // The refused replay (a short key) sent nothing and is not an entry.
      expect(replays).toHaveLength(1);
      expect(replays[0]).toMatchObject({ user_email: expect.stringMatching(/^owner@/), target: `to ${new URL(endpoint()).host}, last 50` });
      expect(JSON.stringify(audit.body)).not.toContain(CANDIDATE_KEY);
      expect(JSON.stringify(audit.body)).not.toContain('/staging');
    });

    it('writes nothing to the conversations', async () => {
      expect((await get().db.selectFrom('session_turns').select('id').execute()).length).toBe(turnsBefore);
    });
  });

  it('replays only the last N messages', async () => {
    const res = await service.api('POST', '/v1/integration/replay', { token: ws.admin, body: { endpoint_url: endpoint(), key: CANDIDATE_KEY, last: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { message: string }) => i.message)).toEqual(['When are you open?', 'Do you ship to Belgium?']);
  });

  it('signs with the workspace\'s current key when no key is given', async () => {
    const other = await seedWorkspace(service, 'Keyless');
    await storeTurns(get(), other.workspaceId);
    const server = await startHttpsServer(candidate(LIVE_KEY));
    try {
      expect((await service.api('PUT', '/v1/integration', { token: other.owner, body: { endpoint_url: `${server.origin}/channel`, key: LIVE_KEY } })).status).toBe(200);
      const res = await service.api('POST', '/v1/integration/replay', { token: other.owner, body: { endpoint_url: `${server.origin}/v2/channel`, last: 1 } });
      expect(res.status).toBe(200);
      expect(res.body.items[0]).toMatchObject({ verdict: 'now_answering', candidate: { http_status: 200 } });
    } finally {
      await server.close();
    }
  });

  it('without a key and without an integration answers 422', async () => {
    const other = await seedWorkspace(service, 'Unconnected');
    const res = await service.api('POST', '/v1/integration/replay', { token: other.owner, body: { endpoint_url: endpoint(), last: 5 } });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('invalid_key');
  });

  describe('who may replay, and where to', () => {
    it('an agent is refused with 403', async () => {
      const before = integrator.requests.length;
      const res = await service.api('POST', '/v1/integration/replay', { token: ws.agent, body: { endpoint_url: endpoint(), key: CANDIDATE_KEY, last: 5 } });
      expect(res.status).toBe(403);
      expect(integrator.requests.length).toBe(before);
    });

    it.each([
      ['https://10.0.0.8/channel', 'private'],
      ['http://example.com/channel', 'https'],
    ])('refuses %s with 422, sending nothing', async (url, reason) => {
      const res = await service.api('POST', '/v1/integration/replay', { token: ws.owner, body: { endpoint_url: url, key: CANDIDATE_KEY, last: 5 } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_url');
      expect(res.body.error.message).toContain(reason);
    });

    it('refuses a candidate key shorter than 32 characters with 422', async () => {
      const res = await service.api('POST', '/v1/integration/replay', { token: ws.owner, body: { endpoint_url: endpoint(), key: 'short', last: 5 } });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('invalid_key');
    });
  });

  describe('from the command line', () => {
    let cli: Awaited<ReturnType<typeof seedWorkspace>>;
    beforeAll(async () => {
      cli = await seedWorkspace(service, 'Cli');
      await storeTurns(get(), cli.workspaceId);
    });

    it('prints each message with both answers where they differ, and exits 1 when the candidate now fails', { timeout: 30_000 }, async () => {
      const run = await runCli(['replay', '--url', service.url, '--token', cli.owner, '--endpoint', endpoint(), '--key', CANDIDATE_KEY, '--last', '50']);
      expect(run.code).toBe(1);
      const lines = run.stdout.trimEnd().split('\n').map((l) => l.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, '<at>'));
      expect(lines).toEqual([
        'changed       <at> whatsapp "Waar is order 1234?"',
        '    live:      "Order 1234 wordt morgen bezorgd."',
        '    candidate: "Order 1234 is vandaag verzonden."',
        'now_failing   <at> whatsapp "Kan ik mijn schoenen retourneren?"',
        '    live:      "Ja, binnen 30 dagen."',
        '    candidate: no answer (status)',
        'same          <at> phone    "When are you open?"',
        'now_answering <at> whatsapp "Do you ship to Belgium?"',
        '    live:      no answer (timeout)',
        '    candidate: "Yes, we ship to Belgium."',
        `4 replayed to ${endpoint()}: 1 same, 1 changed, 1 now_failing, 1 now_answering, 0 still_failing`,
        'changed answers not judged: the judge needs a language model, and this service has none (LLM_BASE_URL is not set)',
      ]);
    });

    it('--json prints the report; an agent\'s token is refused with the service\'s reason', { timeout: 30_000 }, async () => {
      const run = await runCli(['replay', '--json', '--url', service.url, '--endpoint', endpoint(), '--key', CANDIDATE_KEY, '--last', '1'], { BOTLINK_TOKEN: cli.owner });
      expect(JSON.parse(run.stdout)).toMatchObject({ replayed: 1, items: [{ message: 'Do you ship to Belgium?', verdict: 'now_answering' }] });
      expect(run.code).toBe(0);
      const refused = await runCli(['replay', '--url', service.url, '--token', cli.agent, '--endpoint', endpoint(), '--last', '1']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('the service answered HTTP 403');
    });
  });

  describe('rate limits', () => {
    it('a second replay while one runs is answered 429 with Retry-After', async () => {
      const other = await seedWorkspace(service, 'Concurrent');
      await storeTurns(get(), other.workspaceId);
      const slow = await startHttpsServer(candidate(CANDIDATE_KEY, 400));
      try {
        const body = { endpoint_url: `${slow.origin}/channel`, key: CANDIDATE_KEY, last: 10 };
        const first = service.api('POST', '/v1/integration/replay', { token: other.owner, body });
        // The first replay is running once the candidate has its first request.
        await until(() => slow.requests.length > 0);
        const second = await service.api('POST', '/v1/integration/replay', { token: other.admin, body });
        expect(second.status).toBe(429);
        expect(second.body.error.code).toBe('rate_limited');
        expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
        expect((await first).status).toBe(200);
      } finally {
        await slow.close();
      }
    });

    it(`at most ${REPLAYS_PER_MINUTE} replays a minute per workspace`, async () => {
      const other = await seedWorkspace(service, 'Busy');
      const body = { endpoint_url: endpoint(), key: CANDIDATE_KEY, last: 1 };
      for (let i = 0; i < REPLAYS_PER_MINUTE; i += 1) {
        expect((await service.api('POST', '/v1/integration/replay', { token: other.owner, body })).status).toBe(200);
      }
      const refused = await service.api('POST', '/v1/integration/replay', { token: other.owner, body });
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Another workspace is not held back.
      expect((await service.api('POST', '/v1/integration/replay', { token: ws.owner, body })).status).toBe(200);
    });
  });
});

describeEachDatabase('replay to a name that resolves inside the network', (get) => {
  let service: TestService;
  let ws: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    // No address exempt: the machine's own name resolves (through /etc/hosts) to its loopback or private address.
    service = await startTestService(get(), { OUTBOUND_ALLOW: '' });
    ws = await seedWorkspace(service);
  });
  afterAll(() => service.stop());

  it('is refused with the kind of address, never the address the name resolved to', async () => {
    const name = hostname();
    const addresses = (await lookup(name, { all: true })).map((a) => a.address);
    expect(addresses.length).toBeGreaterThan(0);
    const res = await service.api('POST', '/v1/integration/replay', { token: ws.owner, body: { endpoint_url: `https://${name}/botlink/channel`, key: CANDIDATE_KEY, last: 5 } });
    expect(res.status).toBe(422);
    expect(res.body.error.message).toMatch(new RegExp(`^endpoint_url is not usable: ${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} resolves to an? [a-z-]+ address, which is refused$`));
    for (const address of addresses) expect(res.text).not.toContain(address);
  });
});
