/**
 * Who may call what (docs/interfaces.md: Accounts and authorisation; protocol §1.6, §1.7, §5.6, §5.7), for every route the
 * service mounts: each route of the service's own route table is called with every kind of credential, and the
 * answer's class (401, 403, or let through) must be the one its declared `access` gives.
 *
 * The expected table below is keyed by `METHOD path` and must hold exactly the routes of the table, so a new route
 * fails this suite until someone writes down here who may call it; and its access there must be the one declared.
 * Requests carry a well-formed body, so that the answer is the access decision and not the validation of the body.
 * Credentials that the call itself uses up (the token revoked by DELETE /v1/tokens/current, the sync key replaced by
 * POST /v1/keys/sync) are made fresh for every call.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { twilioSignature } from '../../src/channels/phone/twilio-signature.ts';
import { signWebhookBody } from '../../src/channels/whatsapp/signature.ts';
import type { Access } from '../../src/http/route.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { seedWorkspace, startTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/service.ts';

const PUBLIC_URL = 'https://botlink.example';
const SHOP = 'https://shop.example';
const FOREIGN_SITE = 'https://elsewhere.example';
const TWILIO_TOKEN = 'twilio-auth-token-for-the-matrix';
const WHATSAPP_APP_SECRET = 'whatsapp-app-secret-for-the-matrix';
const WHATSAPP_VERIFY_TOKEN = 'whatsapp-verify-token-for-the-matrix';
/** Loopback on the discard port: accepted as an endpoint (OUTBOUND_ALLOW in tests), refused at once when called. */
const DEAD_ENDPOINT = 'https://127.0.0.1:9';

/**
 * How a route is guarded. The declared `access` of the route, or, for the public webhooks of the telephony and
 * WhatsApp platforms, the platform's own proof (their routes are `public` to our tokens and keys).
 */
type Guard = Access | 'twilio-signature' | 'whatsapp-signature' | 'whatsapp-verify-token' | 'password' | 'invite';
/** Signing in (POST /v1/auth/login, /v1/auth/password) is public to tokens: its proof is a password or an invite link. */
const publicGuards: readonly Guard[] = ['twilio-signature', 'whatsapp-signature', 'whatsapp-verify-token', 'password', 'invite'];
const accessOfGuard = (guard: Guard): Access => (publicGuards.includes(guard) ? 'public' : (guard as Access));

/**
 * What an answer must be: `through` (neither 401 nor 403, and no 5xx), `hidden` (404: another workspace's thing is
 * not there for you), or the refusal.
 */
type Outcome = 'through' | 'hidden' | '401' | '403';

interface Fixtures {
  /** A fresh token of a user of workspace a or b. */
  token(workspace: 'a' | 'b', role: 'owner' | 'admin' | 'agent'): Promise<string>;
  /** The workspace's sync key, made now (the previous one stops working). */
  syncKey(workspace: 'a' | 'b'): Promise<string>;
  widgetKey(workspace: 'a' | 'b'): string;
  /** A token that was revoked, a sync key that was replaced. */
  revokedToken: string;
  replacedSyncKey: string;
  /** A page in workspace a, made now; its external_id. */
  newPage(): Promise<string>;
  /** An agent in workspace a, made now; its id. */
  newUser(): Promise<string>;
  /** A hand-made knowledge entry in workspace a, made now; its id. */
  newEntry(): Promise<string>;
  /** A website source of workspace a (never reachable: nothing is fetched from it), made now; its id. */
  newSource(): Promise<string>;
  /** A phrasing the team added to a new entry of workspace a, made now; its id. */
  newPhrasing(): Promise<string>;
  /** Workspace a's conversation, its session and a delivery of its webhook. */
  conversationId: string;
  sessionId: string;
  deliveryId: string;
  /** A user of workspace a with a password. */
  signIn: { email: string; password: string };
  /** The token of a new invite link for a user of workspace a, made now. */
  newInvite(): Promise<string>;
}

interface Cell {
  headers?: Record<string, string>;
  query?: string;
  /** Overrides the route's body (the signed webhooks sign exactly what is sent). */
  raw?: { body: string; contentType: string };
}

interface Credential {
  name: string;
  outcome: Outcome;
  cell(f: Fixtures): Promise<Cell>;
}

interface Expected {
  guard: Guard;
  /** A body of the right shape (a function: made anew for every call, e.g. with a fresh email). */
  body?: object | (() => object);
  /** A body that is not JSON (a multipart upload), sent as it is. */
  raw?: { body: string; contentType: string };
  /** Path parameters; most are real things of workspace a. */
  params?: (f: Fixtures) => Promise<Record<string, string>> | Record<string, string>;
  /** The path names a thing of workspace a: another workspace's credentials get 404, not it. */
  ownedByA?: boolean;
}

let serial = 0;
const unique = (what: string) => `${what}-${++serial}-${randomUUID().slice(0, 8)}`;

const page = { title: 'Returns', body: 'Return anything within 30 days.' };
const twilioForm = { CallSid: 'CA0123456789abcdef0123456789abcdef', From: '+31612345678', To: '+31201234567', HandoffData: '{"reason":"human"}' };
const whatsappPayload = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });

/** Every route, who may call it, and what a call needs. */
const expected: Record<string, Expected> = {
  'GET /healthz': { guard: 'public' },
  'GET /readyz': { guard: 'public' },
  'GET /metrics': { guard: 'public' },
  'GET /openapi.json': { guard: 'public' },

  'POST /v1/admin/workspaces': { guard: 'admin', body: () => ({ name: 'Matrix', owner_email: `${unique('owner')}@matrix.example` }) },
  // A workspace that does not exist: the operator gets 404 (let through), and no real workspace gains an owner.
  'POST /v1/admin/workspaces/{id}/owners': { guard: 'admin', body: () => ({ email: `${unique('rescue')}@matrix.example` }), params: () => ({ id: randomUUID() }) },

  'GET /v1/users': { guard: 'manager' },
  'POST /v1/users': { guard: 'manager', body: () => ({ email: `${unique('user')}@acme.example`, role: 'agent' }) },
  'DELETE /v1/users/{id}': { guard: 'manager', params: async (f) => ({ id: await f.newUser() }), ownedByA: true },
  'POST /v1/users/{id}/invite': { guard: 'manager', params: async (f) => ({ id: await f.newUser() }), ownedByA: true },
  'PATCH /v1/users/{id}': { guard: 'manager', body: { name: 'Sam Jansen' }, params: async (f) => ({ id: await f.newUser() }), ownedByA: true },
  'POST /v1/tokens': { guard: 'member' },
  'DELETE /v1/tokens/current': { guard: 'member' },
  'GET /v1/tokens': { guard: 'member' },
  // Only the caller's own tokens can be named: any other id is 404 for everyone let through.
  'DELETE /v1/tokens/{id}': { guard: 'member', params: () => ({ id: randomUUID() }) },
  'POST /v1/auth/login': { guard: 'password' },
  'POST /v1/auth/password': { guard: 'invite' },
  // Forgot password: public, the same 202 for any address (limited per address and per email: 429 passes here).
  'POST /v1/auth/reset': { guard: 'public', body: () => ({ email: `${unique('reset')}@acme.example` }) },

  'GET /v1/integration': { guard: 'manager' },
  'PUT /v1/integration': { guard: 'manager', body: { endpoint_url: `${DEAD_ENDPOINT}/botlink/channel` } },
  'DELETE /v1/integration': { guard: 'manager' },
  'POST /v1/integration/key': { guard: 'manager', body: {} },
  'POST /v1/integration/tools/test': { guard: 'manager' },
  'POST /v1/integration/test': { guard: 'manager', body: { message: 'Where is my order?' } },
  'POST /v1/integration/replay': { guard: 'manager', body: { endpoint_url: `${DEAD_ENDPOINT}/botlink/channel`, key: 'k'.repeat(40), last: 1 } },

  'PUT /v1/sync/pages/{external_id}': { guard: 'sync-write', body: page, params: () => ({ external_id: unique('page') }) },
  'DELETE /v1/sync/pages/{external_id}': { guard: 'sync-write', params: async (f) => ({ external_id: await f.newPage() }), ownedByA: true },
  'GET /v1/sync/pages': { guard: 'sync-read' },
  'PUT /v1/sync/products/{external_id}': { guard: 'sync-write', body: { title: 'Bike', price: 499 }, params: () => ({ external_id: unique('product') }) },
  'DELETE /v1/sync/products/{external_id}': { guard: 'sync-write', params: () => ({ external_id: unique('product') }) },
  'GET /v1/sync/products': { guard: 'sync-read' },
  'POST /v1/sync/batch': { guard: 'sync-write', body: () => ({ upserts: [{ kind: 'page', external_id: unique('batch'), ...page }], deletes: [] }) },

  'GET /v1/knowledge/entries': { guard: 'member' },
  'POST /v1/knowledge/entries': { guard: 'manager', body: { type: 'qa', title: 'Do you ship abroad?', text: 'Within the EU, yes.' } },
  'GET /v1/knowledge/entries/{id}': { guard: 'member', params: async (f) => ({ id: await f.newEntry() }), ownedByA: true },
  'PUT /v1/knowledge/entries/{id}': { guard: 'manager', body: { type: 'page', title: 'Returns', text: 'Thirty days.' }, params: async (f) => ({ id: await f.newEntry() }), ownedByA: true },
  'DELETE /v1/knowledge/entries/{id}': { guard: 'manager', params: async (f) => ({ id: await f.newEntry() }), ownedByA: true },
  'POST /v1/knowledge/try': { guard: 'manager', body: { question: 'Do you ship abroad?' } },
  // Saved checks and the answers a knowledge change moved (docs/scenarios.md): owners and admins, as Try a question.
  'GET /v1/knowledge/checks': { guard: 'manager' },
  'POST /v1/knowledge/checks': { guard: 'manager', body: () => ({ question: `Do you ship to ${randomUUID()}?` }) },
  'DELETE /v1/knowledge/checks/{id}': { guard: 'manager', params: () => ({ id: randomUUID() }) },
  'POST /v1/knowledge/checks/{id}/accept': { guard: 'manager', params: () => ({ id: randomUUID() }) },
  'GET /v1/knowledge/changes': { guard: 'manager' },
  // The team teaches the bot: ids in a body name nothing of any workspace here (404 for whoever is let through).
  'POST /v1/knowledge/entries/from-conversation': { guard: 'manager', body: () => ({ session_id: randomUUID(), question: 'Do you ship abroad?', answer: 'Within the EU.' }) },
  'POST /v1/knowledge/phrasings': { guard: 'manager', body: () => ({ entry_id: randomUUID(), text: 'do you send parcels abroad' }) },
  'GET /v1/knowledge/passages': { guard: 'manager' },
  'GET /v1/knowledge/search': { guard: 'member' },
  'GET /v1/knowledge/entries/{id}/phrasings': { guard: 'member', params: async (f) => ({ id: await f.newEntry() }), ownedByA: true },
  'DELETE /v1/knowledge/phrasings/{id}': { guard: 'manager', params: async (f) => ({ id: await f.newPhrasing() }), ownedByA: true },
  'POST /v1/knowledge/sources': { guard: 'manager', body: { kind: 'website', url: `${DEAD_ENDPOINT}/`, schedule: 'manual' } },
  'GET /v1/knowledge/sources': { guard: 'member' },
  'GET /v1/knowledge/ai-questions': { guard: 'member' },
  'GET /v1/knowledge/sources/{id}': { guard: 'member', params: async (f) => ({ id: await f.newSource() }), ownedByA: true },
  'DELETE /v1/knowledge/sources/{id}': { guard: 'manager', params: async (f) => ({ id: await f.newSource() }), ownedByA: true },
  'POST /v1/knowledge/sources/{id}/sync': { guard: 'manager', params: async (f) => ({ id: await f.newSource() }), ownedByA: true },
  'POST /v1/knowledge/files': {
    guard: 'manager',
    raw: {
      body: '--matrix\r\nContent-Disposition: form-data; name="file"; filename="matrix.txt"\r\nContent-Type: text/plain\r\n\r\nMade for the matrix.\r\n--matrix--\r\n',
      contentType: 'multipart/form-data; boundary=matrix',
    },
  },

  'POST /v1/keys/sync': { guard: 'manager' },
  'GET /v1/keys/sync': { guard: 'manager' },
  'GET /v1/keys/widget': { guard: 'manager' },

  'GET /v1/sessions': { guard: 'member' },
  'GET /v1/sessions/{id}': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  'GET /v1/sessions/{id}/events': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  'GET /v1/sessions/{id}/summary': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  'GET /v1/sessions/{id}/history': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  // The team's side: every role works the inbox; its setting is for owners and admins.
  'GET /v1/inbox': { guard: 'member' },
  'GET /v1/inbox/events': { guard: 'member' },
  'GET /v1/inbox/settings': { guard: 'member' },
  'PUT /v1/inbox/settings': { guard: 'manager', body: { handback_after_minutes: null } },
  'POST /v1/sessions/{id}/takeover': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  'POST /v1/sessions/{id}/messages': { guard: 'member', body: { text: 'Hello from the team' }, params: (f) => ({ id: f.sessionId }), ownedByA: true },
  // A message that does not exist: let through means 404.
  'POST /v1/sessions/{id}/messages/{message_id}/retry': { guard: 'member', params: (f) => ({ id: f.sessionId, message_id: randomUUID() }) },
  'POST /v1/sessions/{id}/handback': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  'POST /v1/sessions/{id}/close': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  // The visitor's side: the holder's typing (let through and not the holder is the service's 409).
  'POST /v1/sessions/{id}/typing': { guard: 'member', params: (f) => ({ id: f.sessionId }), ownedByA: true },
  // Presence and assignment: every role sets their own presence, sees the team's and assigns a waiting conversation
  // (a session that does not wait: let through means 409).
  'GET /v1/me/presence': { guard: 'member' },
  'PUT /v1/me/presence': { guard: 'member', body: { status: 'away' } },
  'GET /v1/team/presence': { guard: 'member' },
  'POST /v1/sessions/{id}/assign': { guard: 'member', body: { user_id: randomUUID() }, params: (f) => ({ id: f.sessionId }), ownedByA: true },
  'GET /v1/team': { guard: 'member' },
  'PUT /v1/team': { guard: 'member', body: { available: true } },
  'GET /v1/notifications': { guard: 'member' },
  // A notification that does not exist: let through means 404, and no real one changes.
  'POST /v1/notifications/{id}/read': { guard: 'member', params: () => ({ id: randomUUID() }) },
  // The team's tools: every role reads and adds saved replies and writes notes (an agent's change of another's reply is
  // the service's 403, not the route's: a reply that does not exist is a 404 for whoever is let through).
  'GET /v1/saved-replies': { guard: 'member' },
  'POST /v1/saved-replies': { guard: 'member', body: () => ({ shortcut: `m${randomUUID().slice(0, 8)}`, text: 'Hello from the matrix' }) },
  'PUT /v1/saved-replies/{id}': { guard: 'member', body: { shortcut: 'matrix', text: 'Hello' }, params: () => ({ id: randomUUID() }) },
  'DELETE /v1/saved-replies/{id}': { guard: 'member', params: () => ({ id: randomUUID() }) },
  'POST /v1/sessions/{id}/notes': { guard: 'member', body: { text: 'A note for the team' }, params: (f) => ({ id: f.sessionId }), ownedByA: true },
  // Only a note's author changes it and its author or an owner deletes it: the service's 403, not the route's (a note
  // that does not exist is a 404 for whoever is let through).
  'PATCH /v1/sessions/{id}/notes/{note_id}': { guard: 'member', body: { text: 'A changed note' }, params: (f) => ({ id: f.sessionId, note_id: randomUUID() }), ownedByA: true },
  'DELETE /v1/sessions/{id}/notes/{note_id}': { guard: 'member', params: (f) => ({ id: f.sessionId, note_id: randomUUID() }), ownedByA: true },
  // Test scenarios (docs/scenarios.md): owners and admins; a scenario or run that does not exist is a 404 when let through.
  'GET /v1/scenarios': { guard: 'manager' },
  'POST /v1/scenarios': { guard: 'manager', body: () => ({ name: `Matrix ${randomUUID()}`, channel: 'webchat', turns: [{ customer: 'Do you ship to Belgium?' }] }) },
  // Without a model in this service the starter suite is a 422 when let through (neither 401 nor 403).
  'POST /v1/scenarios/starter': { guard: 'manager' },
  'GET /v1/scenarios/{id}': { guard: 'manager', params: () => ({ id: randomUUID() }) },
  'PUT /v1/scenarios/{id}': { guard: 'manager', body: { name: 'Matrix', channel: 'webchat', turns: [{ customer: 'Hi' }] }, params: () => ({ id: randomUUID() }) },
  'DELETE /v1/scenarios/{id}': { guard: 'manager', params: () => ({ id: randomUUID() }) },
  'POST /v1/scenarios/{id}/runs': { guard: 'manager', body: {}, params: () => ({ id: randomUUID() }) },
  'GET /v1/scenarios/{id}/runs': { guard: 'manager', params: () => ({ id: randomUUID() }) },
  'GET /v1/scenario-runs/{id}': { guard: 'manager', params: () => ({ id: randomUUID() }) },

  'POST /v1/webchat/conversations': { guard: 'widget', body: { visitor_message: 'Do you ship to Belgium?', page_url: `${SHOP}/shipping` } },
  // Without the visitor token a conversation's reads and writes are a 404 for the right key too (let through), and
  // hidden for another's.
  'POST /v1/webchat/conversations/{id}/messages': { guard: 'widget', body: { message: 'And to Germany?' }, params: (f) => ({ id: f.conversationId }), ownedByA: true },
  'GET /v1/webchat/conversations/{id}/messages': { guard: 'widget', params: (f) => ({ id: f.conversationId }), ownedByA: true },
  'POST /v1/webchat/conversations/{id}/lead': { guard: 'widget', body: { name: 'Ann', email: 'ann@customer.example' }, params: (f) => ({ id: f.conversationId }), ownedByA: true },
  'POST /v1/webchat/conversations/{id}/escalate': { guard: 'widget', body: {}, params: (f) => ({ id: f.conversationId }), ownedByA: true },
  'POST /v1/webchat/conversations/{id}/typing': { guard: 'widget', body: {}, params: (f) => ({ id: f.conversationId }), ownedByA: true },
  'POST /v1/webchat/conversations/{id}/satisfaction': { guard: 'widget', body: { score: 5 }, params: (f) => ({ id: f.conversationId }), ownedByA: true },
  'GET /v1/webchat': { guard: 'manager' },
  'PUT /v1/webchat': { guard: 'manager', body: { allowed_origins: [SHOP] } },

  'GET /v1/whatsapp/webhook': { guard: 'whatsapp-verify-token' },
  'POST /v1/whatsapp/webhook': { guard: 'whatsapp-signature' },
  'GET /v1/whatsapp': { guard: 'manager' },
  'PUT /v1/whatsapp': { guard: 'manager', body: () => ({ phone_number_id: String(100_000 + serial++), access_token: 'EAAG-token' }) },
  'DELETE /v1/whatsapp': { guard: 'manager' },

  'PUT /v1/phone': { guard: 'manager', body: { numbers: [] } },

  // The Overview: every role reads the figures; the export (customers' details in bulk) is for owners and admins.
  'GET /v1/analytics/overview': { guard: 'member' },
  'GET /v1/analytics/timeseries': { guard: 'member' },
  'GET /v1/analytics/unanswered': { guard: 'member' },
  'GET /v1/exports/conversations': { guard: 'manager' },

  'GET /v1/workspace': { guard: 'member' },
  // The same name every time: the workspace a owner's rename changes nothing the other cells rely on.
  'PATCH /v1/workspace': { guard: 'owner', body: { name: 'Acme' } },
  'GET /v1/workspace/first-day': { guard: 'manager' },
  'PATCH /v1/account': { guard: 'member', body: () => ({ email: `${unique('me')}@acme.example` }) },
  'GET /v1/channels/setup': { guard: 'manager' },
  // Customers' data under control (docs/privacy.md): the audit log for owners and admins, the rest for owners.
  'GET /v1/audit': { guard: 'manager' },
  'GET /v1/workspace/retention': { guard: 'owner' },
  'PUT /v1/workspace/retention': { guard: 'owner', body: { days: null } },
  'POST /v1/privacy/export': { guard: 'owner', body: { email: 'nobody@example.org' } },
  'POST /v1/privacy/erase': { guard: 'owner', body: { email: 'nobody@example.org' } },
  'GET /v1/phone': { guard: 'manager' },
  'POST /v1/phone/twilio/voice': { guard: 'twilio-signature' },
  'POST /v1/phone/twilio/action': { guard: 'twilio-signature' },

  'GET /v1/webhooks': { guard: 'manager' },
  'PUT /v1/webhooks/{event}': { guard: 'manager', body: { url: `${DEAD_ENDPOINT}/hooks/escalation` }, params: () => ({ event: 'escalation' }) },
  'DELETE /v1/webhooks/{event}': { guard: 'manager', params: () => ({ event: 'new_lead' }) },
  'POST /v1/webhooks/{event}/secret': { guard: 'manager', params: () => ({ event: 'new_chat' }) },
  'POST /v1/webhooks/test': { guard: 'manager', body: { event: 'new_chat' } },
  'GET /v1/webhooks/deliveries': { guard: 'manager' },
  'GET /v1/webhooks/deliveries/{id}': { guard: 'manager', params: (f) => ({ id: f.deliveryId }), ownedByA: true },
  'POST /v1/webhooks/deliveries/{id}/retry': { guard: 'manager', params: (f) => ({ id: f.deliveryId }), ownedByA: true },
};
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

/** The credentials tried on a route of each guard, and the outcome each must get. */
function credentialsFor(entry: Expected): Credential[] {
  const otherWorkspace: Outcome = entry.ownedByA ? 'hidden' : 'through';
  switch (entry.guard) {
    case 'public':
      return [
        { name: 'no credentials', outcome: 'through', cell: async () => ({}) },
        { name: 'owner token', outcome: 'through', cell: async (f) => bearer(await f.token('a', 'owner')) },
        { name: 'revoked token', outcome: 'through', cell: async (f) => bearer(f.revokedToken) },
        { name: 'made-up token', outcome: 'through', cell: async () => bearer('blt_not-a-token') },
        { name: 'operator token', outcome: 'through', cell: async () => bearer(TEST_ADMIN_TOKEN) },
      ];
    case 'admin':
      return [
        { name: 'operator token', outcome: 'through', cell: async () => bearer(TEST_ADMIN_TOKEN) },
        { name: 'wrong operator token', outcome: '401', cell: async () => bearer(`${TEST_ADMIN_TOKEN}x`) },
        { name: 'owner token', outcome: '401', cell: async (f) => bearer(await f.token('a', 'owner')) },
        { name: 'sync key', outcome: '401', cell: async (f) => ({ headers: { 'x-sync-key': await f.syncKey('a') } }) },
        { name: 'no credentials', outcome: '401', cell: async () => ({}) },
      ];
    case 'member':
    case 'manager':
    case 'owner':
      return [
        { name: 'owner', outcome: 'through', cell: async (f) => bearer(await f.token('a', 'owner')) },
        { name: 'admin', outcome: entry.guard === 'owner' ? '403' : 'through', cell: async (f) => bearer(await f.token('a', 'admin')) },
        { name: 'agent', outcome: entry.guard === 'member' ? 'through' : '403', cell: async (f) => bearer(await f.token('a', 'agent')) },
        { name: "another workspace's owner", outcome: otherWorkspace, cell: async (f) => bearer(await f.token('b', 'owner')) },
        { name: 'revoked token', outcome: '401', cell: async (f) => bearer(f.revokedToken) },
        { name: 'operator token', outcome: '401', cell: async () => bearer(TEST_ADMIN_TOKEN) },
        { name: 'sync key', outcome: '401', cell: async (f) => ({ headers: { 'x-sync-key': await f.syncKey('a') } }) },
        { name: 'no credentials', outcome: '401', cell: async () => ({}) },
      ];
    case 'sync-write':
    case 'sync-read':
      return [
        { name: 'sync key', outcome: 'through', cell: async (f) => ({ headers: { 'x-sync-key': await f.syncKey('a') } }) },
        { name: 'widget key', outcome: entry.guard === 'sync-read' ? 'through' : '403', cell: async (f) => ({ headers: { 'x-widget-key': f.widgetKey('a') } }) },
        { name: "another workspace's sync key", outcome: otherWorkspace, cell: async (f) => ({ headers: { 'x-sync-key': await f.syncKey('b') } }) },
        { name: 'replaced sync key', outcome: '401', cell: async (f) => ({ headers: { 'x-sync-key': f.replacedSyncKey } }) },
        { name: 'made-up widget key', outcome: '401', cell: async () => ({ headers: { 'x-widget-key': 'wk_not-a-key' } }) },
        { name: 'owner token', outcome: '401', cell: async (f) => bearer(await f.token('a', 'owner')) },
        { name: 'no credentials', outcome: '401', cell: async () => ({}) },
      ];
    case 'widget':
      return [
        { name: 'widget key from an allowed origin', outcome: 'through', cell: async (f) => ({ headers: { 'x-widget-key': f.widgetKey('a'), origin: SHOP } }) },
        { name: 'widget key from another site', outcome: '403', cell: async (f) => ({ headers: { 'x-widget-key': f.widgetKey('a'), origin: FOREIGN_SITE } }) },
        { name: "another workspace's widget key", outcome: otherWorkspace, cell: async (f) => ({ headers: { 'x-widget-key': f.widgetKey('b'), origin: SHOP } }) },
        { name: 'sync key', outcome: '401', cell: async (f) => ({ headers: { 'x-sync-key': await f.syncKey('a'), origin: SHOP } }) },
        { name: 'sync key as widget key', outcome: '401', cell: async (f) => ({ headers: { 'x-widget-key': await f.syncKey('a'), origin: SHOP } }) },
        { name: 'owner token', outcome: '401', cell: async (f) => ({ headers: { authorization: `Bearer ${await f.token('a', 'owner')}`, origin: SHOP } }) },
        { name: 'no credentials', outcome: '401', cell: async () => ({ headers: { origin: SHOP } }) },
      ];
    case 'password': {
      const login = (password: (f: Fixtures) => string, token?: string) => async (f: Fixtures): Promise<Cell> => ({
        raw: { body: JSON.stringify({ email: f.signIn.email, password: password(f) }), contentType: 'application/json' },
        ...(token === undefined ? {} : bearer(token === 'owner' ? await f.token('a', 'owner') : token)),
      });
      // Three failures: fewer than the per-account threshold of failed sign-ins, and the success clears them.
      return [
        { name: 'right password', outcome: 'through', cell: login((f) => f.signIn.password) },
        { name: 'wrong password', outcome: '401', cell: login(() => 'not the password') },
        { name: 'owner token and a wrong password', outcome: '401', cell: login(() => 'not the password', 'owner') },
        { name: 'operator token and a wrong password', outcome: '401', cell: login(() => 'not the password', TEST_ADMIN_TOKEN) },
        { name: 'right password again', outcome: 'through', cell: login((f) => f.signIn.password) },
      ];
    }
    case 'invite': {
      const setPassword = (invite: (f: Fixtures) => Promise<string>, token?: string) => async (f: Fixtures): Promise<Cell> => ({
        raw: { body: JSON.stringify({ invite: await invite(f), password: 'a password of some length' }), contentType: 'application/json' },
        ...(token === undefined ? {} : bearer(token === 'owner' ? await f.token('a', 'owner') : token)),
      });
      // A made-up invite names nothing: 404, whatever token comes with it.
      return [
        { name: 'fresh invite', outcome: 'through', cell: setPassword((f) => f.newInvite()) },
        { name: 'made-up invite', outcome: 'hidden', cell: setPassword(async () => 'bli_not-an-invite') },
        { name: 'owner token and a made-up invite', outcome: 'hidden', cell: setPassword(async () => 'bli_not-an-invite', 'owner') },
        { name: 'operator token and a made-up invite', outcome: 'hidden', cell: setPassword(async () => 'bli_not-an-invite', TEST_ADMIN_TOKEN) },
      ];
    }
    case 'twilio-signature': {
      const form = (signature?: string): Cell => ({
        raw: { body: new URLSearchParams(twilioForm).toString(), contentType: 'application/x-www-form-urlencoded' },
        ...(signature === undefined ? {} : { headers: { 'x-twilio-signature': signature } }),
      });
      return [
        { name: 'Twilio signature', outcome: 'through', cell: async () => form('sign') },
        { name: 'wrong Twilio signature', outcome: '401', cell: async () => form(twilioSignature('another-auth-token', `${PUBLIC_URL}/v1/phone/twilio/voice`, twilioForm)) },
        { name: 'owner token', outcome: '401', cell: async (f) => ({ ...form(), headers: { authorization: `Bearer ${await f.token('a', 'owner')}` } }) },
        { name: 'no credentials', outcome: '401', cell: async () => form() },
      ];
    }
    case 'whatsapp-signature': {
      const signed = (signature?: string): Cell => ({
        raw: { body: whatsappPayload, contentType: 'application/json' },
        ...(signature === undefined ? {} : { headers: { 'x-hub-signature-256': signature } }),
      });
      return [
        { name: "Meta's signature", outcome: 'through', cell: async () => signed(signWebhookBody(WHATSAPP_APP_SECRET, whatsappPayload)) },
        { name: 'wrong signature', outcome: '401', cell: async () => signed(signWebhookBody('another-app-secret', whatsappPayload)) },
        { name: 'owner token', outcome: '401', cell: async (f) => ({ ...signed(), headers: { authorization: `Bearer ${await f.token('a', 'owner')}` } }) },
        { name: 'no credentials', outcome: '401', cell: async () => signed() },
      ];
    }
    case 'whatsapp-verify-token': {
      const handshake = (token?: string): Cell => ({
        query: new URLSearchParams({ 'hub.mode': 'subscribe', 'hub.challenge': '1158201444', ...(token === undefined ? {} : { 'hub.verify_token': token }) }).toString(),
      });
      return [
        { name: 'verify token', outcome: 'through', cell: async () => handshake(WHATSAPP_VERIFY_TOKEN) },
        { name: 'wrong verify token', outcome: '403', cell: async () => handshake('not-our-token') },
        { name: 'owner token', outcome: '403', cell: async (f) => ({ ...handshake(), headers: { authorization: `Bearer ${await f.token('a', 'owner')}` } }) },
        { name: 'no credentials', outcome: '403', cell: async () => handshake() },
      ];
    }
  }
}

/** What the answer was, in the words of Outcome; anything else is spelled out so the table shows it. */
function outcomeOf(status: number, body: { error?: { code?: string } } | undefined, wanted: Outcome): string {
  if (status === 401) return body?.error?.code === 'unauthorized' ? '401' : `401 without the error body`;
  if (status === 403) return body?.error?.code === 'forbidden' ? '403' : `403 without the error body`;
  if (status >= 500) return `${status}`;
  if (wanted === 'hidden') return status === 404 ? 'hidden' : `${status} (another workspace's thing was reached)`;
  return 'through';
}

describeEachDatabase('the authorisation matrix', (get) => {
  let service: TestService;
  let fixtures: Fixtures;

  beforeAll(async () => {
    service = await startTestService(
      get(),
      { PUBLIC_URL, TWILIO_AUTH_TOKEN: TWILIO_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN },
      { webchat: { rateLimit: { burst: 10_000, windowMs: 1_000 } } },
    );
    const a = await seedWorkspace(service, 'Acme');
    const b = await seedWorkspace(service, 'Globex');
    const roots = { a, b };
    const call = async (method: string, path: string, options: Parameters<TestService['api']>[2], status: number) => {
      const res = await service.api(method, path, options);
      if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
      return res.body;
    };
    const syncKey = async (workspace: 'a' | 'b') => (await call('POST', '/v1/keys/sync', { token: roots[workspace].owner }, 201)).key as string;
    const widgetKeys = {
      a: (await call('GET', '/v1/keys/widget', { token: a.owner }, 200)).key as string,
      b: (await call('GET', '/v1/keys/widget', { token: b.owner }, 200)).key as string,
    };
    for (const ws of [a, b]) await call('PUT', '/v1/webchat', { token: ws.owner, body: { allowed_origins: [SHOP] } }, 200);

    const revokedToken = (await call('POST', '/v1/tokens', { token: a.agent }, 201)).token as string;
    await call('DELETE', '/v1/tokens/current', { token: revokedToken }, 204);
    const replacedSyncKey = await syncKey('a');
    await syncKey('a');

    const started = await call('POST', '/v1/webchat/conversations', { headers: { 'x-widget-key': widgetKeys.a, origin: SHOP }, body: { visitor_message: 'Hello there', page_url: `${SHOP}/` } }, 201);
    const sessions = await call('GET', '/v1/sessions', { token: a.owner }, 200);
    await call('PUT', '/v1/webhooks/new_chat', { token: a.owner, body: { url: `${DEAD_ENDPOINT}/hooks/new_chat` } }, 200);
    const delivery = await call('POST', '/v1/webhooks/test', { token: a.owner, body: { event: 'new_chat' } }, 200);
    const newInvite = async () => {
      const made = await call('POST', '/v1/users', { token: a.owner, body: { email: `${unique('invited')}@acme.example`, role: 'agent' } }, 201);
      return (made.invite_url as string).split('#')[1]!;
    };
    const signIn = { email: `${unique('signs-in')}@acme.example`, password: 'the password of the matrix' };
    const withPassword = await call('POST', '/v1/users', { token: a.owner, body: { email: signIn.email, role: 'agent' } }, 201);
    await call('POST', '/v1/auth/password', { body: { invite: (withPassword.invite_url as string).split('#')[1], password: signIn.password } }, 200);

    // A user holds at most MAX_TOKENS_PER_USER live tokens: the fresh ones of earlier cells (used once, at once) are
    // revoked as new ones are made.
    const issued = new Map<string, string[]>();
    fixtures = {
      async token(workspace, role) {
        const made = issued.get(`${workspace}:${role}`) ?? [];
        issued.set(`${workspace}:${role}`, made);
        // 401 when a cell revoked it already (DELETE /v1/tokens/current is in the matrix too).
        if (made.length >= 10) expect([204, 401]).toContain((await service.api('DELETE', '/v1/tokens/current', { token: made.shift()! })).status);
        const token = (await call('POST', '/v1/tokens', { token: roots[workspace][role] }, 201)).token as string;
        made.push(token);
        return token;
      },
      syncKey,
      widgetKey: (workspace) => widgetKeys[workspace],
      revokedToken,
      replacedSyncKey,
      async newPage() {
        const id = unique('page');
        await call('PUT', `/v1/sync/pages/${id}`, { headers: { 'x-sync-key': await syncKey('a') }, body: page }, 201);
        return id;
      },
      async newEntry() {
        const made = await call('POST', '/v1/knowledge/entries', { token: a.owner, body: { type: 'page', title: unique('entry'), text: 'Made for the matrix.' } }, 201);
        return made.id as string;
      },
      async newPhrasing() {
        const entry = await call('POST', '/v1/knowledge/entries', { token: a.owner, body: { type: 'page', title: unique('entry'), text: 'Made for the matrix.' } }, 201);
        const made = await call('POST', '/v1/knowledge/phrasings', { token: a.owner, body: { entry_id: entry.id, text: unique('phrasing') } }, 201);
        return made.id as string;
      },
      async newSource() {
        const made = await call('POST', '/v1/knowledge/sources', { token: a.owner, body: { kind: 'website', url: `${DEAD_ENDPOINT}/`, schedule: 'manual' } }, 201);
        return made.source.id as string;
      },
      async newUser() {
        return (await call('POST', '/v1/users', { token: a.owner, body: { email: `${unique('leaving')}@acme.example`, role: 'agent' } }, 201)).user.id as string;
      },
      conversationId: started.conversation_id as string,
      sessionId: (sessions.sessions as Array<{ id: string; session_id: string }>).find((s) => s.session_id === started.conversation_id)!.id,
      deliveryId: delivery.id as string,
      signIn,
      newInvite,
    };
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('the expected table names exactly the routes the service mounts, each with its declared access', () => {
    const mounted = service.routes.map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(new Set(mounted).size, 'a METHOD path is declared twice').toBe(mounted.length);
    expect(Object.keys(expected).sort()).toEqual([...mounted].sort());
    const declared = Object.fromEntries(service.routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r.access]));
    const fromTable = Object.fromEntries(Object.entries(expected).map(([key, e]) => [key, accessOfGuard(e.guard)]));
    expect(declared).toEqual(fromTable);
  });

  it('every route of the table is described in /openapi.json with the security of its access', async () => {
    const doc = (await service.api('GET', '/openapi.json')).body;
    const security: Record<Access, unknown> = {
      public: [],
      admin: [{ operatorToken: [] }],
      member: [{ bearer: [] }],
      manager: [{ bearer: [] }],
      owner: [{ bearer: [] }],
      'sync-write': [{ syncKey: [] }],
      'sync-read': [{ syncKey: [] }, { widgetKey: [] }],
      widget: [{ widgetKey: [] }],
    };
    for (const r of service.routes) expect(doc.paths[r.path]?.[r.method]?.security, `${r.method} ${r.path}`).toEqual(security[r.access]);
  });

  describe.each(Object.keys(expected).sort())('%s', (key) => {
    it('answers each credential as its access says', async () => {
      const entry = expected[key]!;
      const route = service.routes.find((r) => `${r.method.toUpperCase()} ${r.path}` === key);
      expect(route, `${key} is not mounted`).toBeDefined();
      const [method, template] = key.split(' ') as [string, string];
      const observed: Record<string, string> = {};
      const wanted: Record<string, string> = {};
      for (const credential of credentialsFor(entry)) {
        // Params first: making a page replaces the sync key, which the credential then takes fresh.
        const params = (await entry.params?.(fixtures)) ?? {};
        const cell = await credential.cell(fixtures);
        const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? randomUUID()));
        const url = `${service.url}${path}${cell.query ? `?${cell.query}` : ''}`;
        const headers: Record<string, string> = { ...cell.headers };
        let body: string | undefined;
        const raw = cell.raw ?? entry.raw;
        if (raw) {
          body = raw.body;
          headers['content-type'] = raw.contentType;
        } else if (entry.body !== undefined) {
          body = JSON.stringify(typeof entry.body === 'function' ? entry.body() : entry.body);
          headers['content-type'] = 'application/json';
        }
        if (entry.guard === 'twilio-signature' && headers['x-twilio-signature'] === 'sign') {
          headers['x-twilio-signature'] = twilioSignature(TWILIO_TOKEN, `${PUBLIC_URL}${path}`, twilioForm);
        }
        const res = await send(method, url, headers, body);
        observed[credential.name] = outcomeOf(res.status, res.body, credential.outcome);
        wanted[credential.name] = credential.outcome;
      }
      expect(observed).toEqual(wanted);
    });
  });
});

/** One request; a Server-Sent Events answer is cut off once its status is known (the stream would stay open). */
async function send(method: string, url: string, headers: Record<string, string>, body: string | undefined): Promise<{ status: number; body: { error?: { code?: string } } | undefined }> {
  const controller = new AbortController();
  const res = await fetch(url, { method, headers, body, signal: controller.signal });
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, body: undefined };
  }
  const text = await res.text();
  try {
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  } catch {
    return { status: res.status, body: undefined };
  }
}
