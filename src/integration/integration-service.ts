/**
 * The workspace's Bot Link settings (protocol §1.7, docs/interfaces.md Dashboard API): endpoint URL and shared key. The key
 * is sealed at rest, appears in an answer only when it is new, and changing the URL keeps a working key.
 */
import { randomUUID } from 'node:crypto';
import type { IntegrationsRepository } from '../../db/repositories/integrations.repository.ts';
import type { Integration } from '../../db/schema.ts';
import { buildChannelRequest } from '../botlink/channel-request.ts';
import { bodyExcerpt } from '../botlink/channel-response.ts';
import type { BotLinkClient } from '../botlink/client.ts';
import { answerP99, DOWN_AFTER_FAILURES, FAILURE_STREAK_MS, outcomeMix, waitBudget, type EndpointHealth, type HealthOutcomeKind, type HealthState } from '../botlink/endpoint-health.ts';
import type { EndpointHealthTracker } from '../botlink/endpoint-health-tracker.ts';
import { recordExchange } from '../botlink/health-aware-send.ts';
import type { ToolsClient } from '../botlink/tools-client.ts';
import type { ManifestProblem } from '../botlink/tools-types.ts';
import { generateKey, keyHint } from '../botlink/signing.ts';
import { toolsBase } from '../botlink/tools-base.ts';
import { AppError, notFound } from '../errors.ts';
import { CHANNEL_TIMEOUT_MS, MIN_OWN_KEY_CHARS, PHONE_CHANNEL_TIMEOUT_MS } from '../limits.ts';
import type { GuardedClient } from '../net/guarded-client.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import { cleanJson } from '../text/outside-text.ts';
import { adviceForHealth, adviceForReason, refusedUrlAdvice } from './advice.ts';
import { integrationKeyContext } from '../secrets/contexts.ts';

/** The longest own key we accept; far beyond any sensible key, short enough to keep rows small. */
export const MAX_OWN_KEY_CHARS = 512;
export const TEST_MESSAGE = 'This is a test message from the Botlink dashboard.';
/**
 * How long opened credentials are reused before the row is read and the key opened again. Every turn needs them up to
 * three times (bot link, manifest, tools); changes made through this process drop the cache at once, changes made by
 * another process are seen within this time.
 */
export const CREDENTIALS_CACHE_MS = 10_000;
/**
 * Credentials this old are read again in the background while the cached ones still serve. Without it, every turn
 * arriving after the expiry read the row itself: at 500 phone turns/s, every 10 s some hundreds of reads queued in the
 * pool ahead of the turn writes (docs/performance.md).
 */
const CREDENTIALS_REFRESH_AHEAD_MS = CREDENTIALS_CACHE_MS * 0.8;

export interface ToolsReport {
  status: 'ok' | 'unavailable';
  error: string | null;
  tools: { name: string; description: string; parameters: Record<string, unknown> }[];
  problems: ManifestProblem[];
  tools_base: string;
  fetched_at: string;
}

export interface IntegrationView {
  endpoint_url: string;
  tools_base: string;
  key_hint: string;
  updated_at: string;
  /** The endpoint's health (docs/architecture.md, "Endpoint health"); absent in a process without the tracker. */
  health?: HealthView;
}

export interface HealthView {
  state: HealthState;
  /** Whether any request reached (or tried to reach) this URL since it was saved: until then it is "not contacted yet". */
  contacted: boolean;
  /** The latest failure, said for the owner with what to do; null when none was seen. */
  advice: string | null;
  since: string;
  /** How long a turn waits for the endpoint now, ms: the whole deadline, or 0 while down. */
  wait_ms: { phone: number; whatsapp: number };
  /** The protocol's deadlines (protocol §8), waited in full unless the endpoint is down, ms. */
  deadline_ms: { phone: number; whatsapp: number };
  /** What takes the endpoint down: this many failures in a row, each within `within_ms` of the last. */
  down_after: { failures: number; within_ms: number };
  consecutive_failures: number;
  /** The last failure in words; null when none was seen. */
  last_problem: string | null;
  /** p99 of the recent answer times, ms; null without a recent answer. */
  answer_p99_ms: number | null;
  /** The recent outcomes by kind (the last 50 within 10 minutes). */
  recent: Record<HealthOutcomeKind, number>;
  /** While down, how often the endpoint is tried again (a probe), ms. */
  probe_interval_ms: number;
}

export interface TestReport {
  outcome: 'answer' | 'no_answer';
  /** 'answer', or why there was no answer (status, invalid_json, cut_off, empty_reply, timeout, …). */
  reason: string;
  /** A sentence for people: what happened. */
  message: string;
  http_status: number | null;
  latency_ms: number;
  /** The parsed JSON the endpoint returned, or null when it was not JSON. */
  response: unknown;
  problems: { field: string; message: string }[];
  body_excerpt: string;
  request: { channel: 'webchat'; session_id: string; message: string; language: string };
  /** What happened and what to do, for the owner (src/integration/advice.ts). */
  advice: string;
  /** The URL tested: the saved one, or the one given (not saved). */
  endpoint_url: string;
  /** Which key signed: the saved one, the one given with the URL, or a temporary one (nothing saved, none given). */
  signed_with: 'saved_key' | 'given_key' | 'temporary_key';
}

export function createIntegrationService(deps: {
  integrations: IntegrationsRepository;
  secrets: SecretBox;
  http: GuardedClient;
  botlink: BotLinkClient;
  tools?: ToolsClient;
  /** The endpoints' shared health: shown by `get`, fed by the test button. */
  health?: EndpointHealthTracker;
  /** Called after the endpoint or key changed (the tools manifest cache is dropped). */
  onChange?: (workspaceId: string) => void;
  now?: () => Date;
}) {
  const { integrations, secrets, http, botlink } = deps;
  const now = deps.now ?? (() => new Date());
  type Credentials = { endpointUrl: string; key: string } | undefined;
  const opened = new Map<string, { value: Credentials; at: number }>();
  /** One read per workspace at a time; every caller that needs it then waits for that one. */
  const reading = new Map<string, Promise<Credentials>>();
  const readCredentials = (workspaceId: string): Promise<Credentials> => {
    const running = reading.get(workspaceId);
    if (running) return running;
    const self: { read?: Promise<Credentials> } = {};
    self.read = (async () => {
      const row = await integrations.find(workspaceId);
      const value = row ? { endpointUrl: row.endpoint_url, key: secrets.open(row.key_sealed, integrationKeyContext(workspaceId)) } : undefined;
      // A change made meanwhile (changed() forgot this read) must not be overwritten by what was read before it.
      if (reading.get(workspaceId) === self.read) opened.set(workspaceId, { value, at: Date.now() });
      return value;
    })().finally(() => {
      if (reading.get(workspaceId) === self.read) reading.delete(workspaceId);
    });
    reading.set(workspaceId, self.read);
    return self.read;
  };
  const changed = (workspaceId: string) => {
    opened.delete(workspaceId);
    reading.delete(workspaceId);
    deps.health?.forget(workspaceId);
    deps.onChange?.(workspaceId);
  };

  const checkUrl = (url: string): Promise<string> => checkEndpointUrl(http, url);

  return {
    async get(workspaceId: string): Promise<IntegrationView> {
      const row = await integrations.find(workspaceId);
      if (!row) throw notFound('The integration');
      if (!deps.health) return view(row);
      return { ...view(row), health: healthView(await deps.health.current(workspaceId, row.endpoint_url), now().getTime(), deps.health.probeIntervalMs) };
    },

    /** First time without a key: a generated one. Later without a key: the current key is kept. */
    async put(workspaceId: string, input: { endpoint_url: string; key?: string }): Promise<IntegrationView & { key?: string }> {
      const endpointUrl = await checkUrl(input.endpoint_url);
      const ownKey = input.key === undefined ? undefined : checkOwnKey(input.key);
      const existing = await integrations.find(workspaceId);
      if (existing && ownKey === undefined) {
        const row = await integrations.updateUrl(workspaceId, endpointUrl, now());
        changed(workspaceId);
        if (row) return view(row);
      }
      const key = ownKey ?? generateKey();
      const row = await integrations.upsert({
        workspace_id: workspaceId,
        endpoint_url: endpointUrl,
        key_sealed: secrets.seal(key, integrationKeyContext(workspaceId)),
        key_hint: keyHint(key),
        updated_at: now(),
      });
      changed(workspaceId);
      return { ...view(row), key };
    },

    async replaceKey(workspaceId: string, input: { key?: string }): Promise<IntegrationView & { key: string }> {
      const key = input.key === undefined ? generateKey() : checkOwnKey(input.key);
      const row = await integrations.updateKey(workspaceId, secrets.seal(key, integrationKeyContext(workspaceId)), keyHint(key), now());
      if (!row) throw notFound('The integration');
      changed(workspaceId);
      return { ...view(row), key };
    },

    async remove(workspaceId: string): Promise<void> {
      const removed = await integrations.remove(workspaceId);
      changed(workspaceId);
      if (!removed) throw notFound('The integration');
    },

    /** The endpoint URL and the opened key, for signing; undefined when the workspace has no integration. */
    async credentials(workspaceId: string): Promise<{ endpointUrl: string; key: string } | undefined> {
      const cached = opened.get(workspaceId);
      const age = cached ? Date.now() - cached.at : Infinity;
      if (cached && age < CREDENTIALS_CACHE_MS) {
        // A failed background read leaves the cached value to its expiry; the next caller then reads (and fails) itself.
        if (age >= CREDENTIALS_REFRESH_AHEAD_MS) readCredentials(workspaceId).catch(() => {});
        return cached.value;
      }
      return readCredentials(workspaceId);
    },

    /** The tools test button: fetches the manifest now (no cache) and reports the tools and every problem. */
    async testTools(workspaceId: string): Promise<ToolsReport> {
      const credentials = await this.credentials(workspaceId);
      if (!credentials) throw notFound('The integration');
      if (!deps.tools) throw new AppError('unavailable', 'Tools are not available in this process.');
      const manifest = await deps.tools.fetchManifestNow(credentials);
      return {
        status: manifest.status,
        error: manifest.error ?? null,
        tools: manifest.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
        problems: manifest.problems,
        tools_base: toolsBase(credentials.endpointUrl),
        fetched_at: new Date(manifest.fetchedAt).toISOString(),
      };
    },

    /**
     * A `webchat` channel request from the dashboard (protocol §4.6: the test button, and "Try a question" in
     * docs/knowledge.md), and what came back; undefined when the workspace has no integration.
     */
    async ask(workspaceId: string, input: { message: string; language: string; sessionId: string }) {
      const credentials = await this.credentials(workspaceId);
      if (!credentials) return undefined;
      const request = buildChannelRequest({ channel: 'webchat', conversationId: input.sessionId, message: input.message, language: input.language, customerPhone: null, now: now() });
      const exchange = await botlink.send({ endpointUrl: credentials.endpointUrl, key: credentials.key, request });
      // What the owner's test shows is also what the endpoint's health learns (a fixed endpoint recovers at once).
      if (deps.health) recordExchange(deps.health, workspaceId, credentials.endpointUrl, exchange, CHANNEL_TIMEOUT_MS);
      return { request, exchange };
    },

    /** The dashboard's test button (protocol §4.6): a `webchat` channel request, and exactly what came back. */
    async test(workspaceId: string, input: { message?: string; language?: string; endpoint_url?: string; key?: string }): Promise<TestReport> {
      const saved = await this.credentials(workspaceId);
      // Test before saving: the URL typed, under the same rules as saving it (https, public), signed with the key given,
      // else the saved key, else a temporary one (docs/integrators.md, "Test before you save").
      let credentials = saved;
      let signedWith: TestReport['signed_with'] = 'saved_key';
      if (input.endpoint_url !== undefined) {
        const endpointUrl = await checkUrl(input.endpoint_url);
        const given = input.key === undefined ? undefined : checkOwnKey(input.key);
        signedWith = given !== undefined ? 'given_key' : saved ? 'saved_key' : 'temporary_key';
        credentials = { endpointUrl, key: given ?? saved?.key ?? generateKey() };
      }
      if (!credentials) {
        throw new AppError('not_found', 'No endpoint is saved yet: enter its address to test it, or save it first.', [{ field: 'endpoint_url', message: 'Enter the address of your endpoint.' }]);
      }
      const request = buildChannelRequest({
        channel: 'webchat',
        conversationId: `test-${randomUUID()}`,
        message: input.message ?? TEST_MESSAGE,
        language: input.language ?? 'en',
        customerPhone: null,
        now: now(),
      });
      const exchange = await botlink.send({ endpointUrl: credentials.endpointUrl, key: credentials.key, request });
      // What the owner's test shows is also what the endpoint's health learns (a fixed endpoint recovers at once).
      // Only the saved endpoint's health: an unsaved URL is a trial.
      if (deps.health && saved && credentials.endpointUrl === saved.endpointUrl) {
        recordExchange(deps.health, workspaceId, credentials.endpointUrl, exchange, CHANNEL_TIMEOUT_MS);
      }
      const { outcome } = exchange;
      const reason = outcome.outcome === 'answer' ? 'answer' : outcome.reason;
      return {
        outcome: outcome.outcome,
        reason: outcome.outcome === 'answer' ? 'answer' : outcome.reason,
        message: outcome.outcome === 'answer' ? 'The endpoint answered.' : outcome.message,
        http_status: exchange.httpStatus,
        latency_ms: Math.round(exchange.latencyMs),
        response: parseJson(exchange.body),
        problems: outcome.problems,
        body_excerpt: bodyExcerpt(exchange.body),
        request: { channel: 'webchat', session_id: request.session_id, message: request.message, language: request.language },
        advice: adviceForReason(reason, exchange.httpStatus),
        endpoint_url: credentials.endpointUrl,
        signed_with: signedWith,
      };
    },
  };
}

export type IntegrationService = ReturnType<typeof createIntegrationService>;

/** An endpoint URL as saving it requires (protocol §4: https and public); 422 `invalid_url` with the reason otherwise. */
export async function checkEndpointUrl(http: GuardedClient, url: string): Promise<string> {
  const verdict = await http.validateUrl(url);
  if (!verdict.ok) throw new AppError('invalid_url', `endpoint_url is not usable: ${verdict.reason}`, [{ field: 'endpoint_url', message: refusedUrlAdvice(verdict.reason) }]);
  return verdict.url.href;
}

/** An own key as protocol §5.2–§5.3 allow it; 422 `invalid_key` with the reason otherwise. */
export function checkOwnKey(key: string): string {
  // protocol §5.2: the key is used exactly as displayed, as text; so refuse what would not survive copying.
  if (key.length < MIN_OWN_KEY_CHARS) {
    throw new AppError('invalid_key', `key must have at least ${MIN_OWN_KEY_CHARS} characters (it has ${key.length}); leave it out to have one generated.`, [{ field: 'key', message: `shorter than ${MIN_OWN_KEY_CHARS} characters` }]);
  }
  if (key.length > MAX_OWN_KEY_CHARS) {
    throw new AppError('invalid_key', `key must have at most ${MAX_OWN_KEY_CHARS} characters.`, [{ field: 'key', message: `longer than ${MAX_OWN_KEY_CHARS} characters` }]);
  }
  if (key !== key.trim() || /[\p{Cc}\p{Cf}]/u.test(key)) {
    throw new AppError('invalid_key', 'key must not start or end with spaces or contain control characters; it is used exactly as written.', [{ field: 'key', message: 'has spaces at an end or control characters' }]);
  }
  return key;
}

function view(row: Integration): IntegrationView {
  return {
    endpoint_url: row.endpoint_url,
    tools_base: toolsBase(row.endpoint_url),
    key_hint: row.key_hint,
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

function healthView(health: EndpointHealth, at: number, probeIntervalMs: number): HealthView {
  const lastFailure = [...health.recent].reverse().find((o) => o.kind !== 'answer');
  return {
    state: health.state,
    contacted: health.recent.length > 0 || health.lastProblem !== null,
    advice: health.lastProblem === null ? null : adviceForHealth(lastFailure?.kind ?? null),
    since: new Date(health.since).toISOString(),
    wait_ms: { phone: waitBudget(health, PHONE_CHANNEL_TIMEOUT_MS).waitMs, whatsapp: waitBudget(health, CHANNEL_TIMEOUT_MS).waitMs },
    deadline_ms: { phone: PHONE_CHANNEL_TIMEOUT_MS, whatsapp: CHANNEL_TIMEOUT_MS },
    down_after: { failures: DOWN_AFTER_FAILURES, within_ms: FAILURE_STREAK_MS },
    consecutive_failures: health.consecutiveFailures,
    last_problem: health.lastProblem,
    answer_p99_ms: answerP99(health, at),
    recent: outcomeMix(health, at),
    probe_interval_ms: probeIntervalMs,
  };
}

/** What the test button shows as the endpoint's JSON: cleaned (outside text), or null beyond this depth. */
const MAX_SHOWN_DEPTH = 64;

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  // A 64 KB answer can nest 10,000 levels, deeper than our own JSON.stringify can write back; the body excerpt shows it.
  return deeperThan(value, MAX_SHOWN_DEPTH) ? null : cleanJson(value);
}

function deeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}
