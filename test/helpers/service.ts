/** Starts the real service (real wiring, real HTTP) on a test database, and a small client for its API. */
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startService, type RunningService, type ServiceOptions } from '../../src/app/service.ts';
import type { TestDatabase } from './db.ts';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef0123456789';

export interface TestService extends RunningService {
  api(method: string, path: string, options?: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<ApiResponse>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export async function startTestService(
  database: TestDatabase,
  env: Record<string, string> = {},
  options: Partial<ServiceOptions> = {},
): Promise<TestService> {
  return startTestServiceOn(env, {
    database: { db: database.db, kind: database.kind, close: async () => {}, ...(database.listen ? { listen: database.listen } : {}) },
    ...options,
  });
}

/**
 * The service on the settings given, as the tests configure it; without `options.database` it opens (and migrates)
 * its own database from DATABASE_URL, as `npm start` does.
 */
export async function startTestServiceOn(env: Record<string, string> = {}, options: Partial<ServiceOptions> = {}): Promise<TestService> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'botlink-test-')),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    MASTER_KEY: randomBytes(32).toString('hex'),
    OUTBOUND_ALLOW: '127.0.0.1/32',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const service = await startService({
    config,
    logger: createLogger(config.logLevel, undefined, { customerData: config.logCustomerData }),
    drainMs: 1_000,
    ...options,
  });
  return {
    ...service,
    async api(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined = opts.raw;
      if (opts.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = JSON.stringify(opts.body);
      }
      const res = await fetch(service.url + path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
  };
}

/**
 * A user added through the API (POST /v1/users, which answers no token) and a token of theirs, made as the operator
 * makes one (`cli token create`): the person's own token, without spending a password hash on every seed.
 */
export async function addUserWithToken(service: TestService, owner: string, email: string, role: 'owner' | 'admin' | 'agent') {
  const made = await service.api('POST', '/v1/users', { token: owner, body: { email, role } });
  if (made.status !== 201) throw new Error(`adding ${email} failed: ${made.text}`);
  const workspaceId = (await service.accounts.authenticate(owner))!.workspaceId;
  const issued = await service.accounts.issueToken(await service.accounts.userByEmail(workspaceId, email));
  return { id: made.body.user.id as string, token: issued.token, inviteUrl: made.body.invite_url as string };
}

/** A workspace with an owner, an admin and an agent, each with a token. */
export async function seedWorkspace(service: TestService, name = 'Acme') {
  const created = await service.api('POST', '/v1/admin/workspaces', {
    token: TEST_ADMIN_TOKEN,
    body: { name, owner_email: `owner@${name.toLowerCase()}.example` },
  });
  if (created.status !== 201) throw new Error(`seed failed: ${created.text}`);
  const owner = created.body.owner.token as string;
  const admin = await addUserWithToken(service, owner, `admin@${name.toLowerCase()}.example`, 'admin');
  const agent = await addUserWithToken(service, owner, `agent@${name.toLowerCase()}.example`, 'agent');
  return {
    workspaceId: created.body.workspace.id as string,
    owner,
    admin: admin.token,
    adminId: admin.id,
    agent: agent.token,
    agentId: agent.id,
  };
}

/**
 * A JSON POST sent from another loopback address (Linux answers on all of 127.0.0.0/8), so the service sees another
 * client address (`req.ip`); a fresh connection each, as different clients make.
 */
export function postFrom(
  service: TestService,
  localAddress: string,
  path: string,
  body: object,
  headers: Record<string, string> = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<{ status: number; retryAfter: string | undefined; body: any }> {
  const { hostname, port } = new URL(service.url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: hostname, port, localAddress, agent: false, method: 'POST', path, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: text ? JSON.parse(text) : {} }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * A user's Server-Sent Events stream (the inbox's, a session's) followed as it comes: the data of its events of one
 * type, in order, and the stream's status once it answered. `stop` closes it.
 */
export function followEvents(service: TestService, token: string, path: string, type: string) {
  const controller = new AbortController();
  const events: Array<Record<string, unknown>> = [];
  const answered: { status?: number } = {};
  const reading = (async () => {
    const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    answered.status = res.status;
    if (!res.ok || !res.body) return;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = new RegExp(`^event: ${type}\\ndata: (.*)$`, 'm').exec(block);
        if (data) events.push(JSON.parse(data[1]!) as Record<string, unknown>);
      }
    }
  })().catch(() => undefined);
  return {
    events,
    answered,
    async stop() {
      controller.abort();
      await reading;
    },
  };
}
