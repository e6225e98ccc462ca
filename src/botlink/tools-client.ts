// Over 400 lines: the manifest fetch, its cache and the tool calls share the signing and the one outbound client.
/**
 * The tools client: fetches the integrator's tool manifest and calls its tools for the phone AI (protocol §2.3–§2.5,
 * §4.2–§4.4), signed as protocol §5.4 says for tools: X-Service-Sent-At and HMAC(key, sent_at + '.' + raw_body).
 *
 * Like the bot link client it never throws for anything the integrator, the network or the AI does: a manifest that
 * cannot be read is status 'unavailable', and every call ends in a {@link ToolOutcome} whose `content` is what the AI
 * reads next (protocol §1.8: an error or timeout never breaks a conversation).
 *
 * Manifest cache (protocol §4.3: 10 minutes):
 * - one entry per workspace, fresh while `now() <= fetchedAt + MANIFEST_CACHE_MS`; the entry remembers the endpoint
 *   URL and a SHA-256 of the key, so new credentials miss it without the key itself ever being a key or a log field;
 * - stale while refreshing: a manifest that was read fine and expired less than MANIFEST_STALE_MS ago is still
 *   offered, and a new fetch starts in the background; its result (tools or a failure) replaces the entry. So a turn
 *   never waits for the 10-minute refresh of a working endpoint (the manifest off the phone's critical path);
 * - `prefetch` starts the fetch when a call is set up, so the first turn of a call finds it ready;
 * - a manifest that could not be fetched or read is remembered for {@link MANIFEST_FAILURE_CACHE_MS}, so a dead
 *   endpoint is asked at most twice a minute per workspace rather than on every turn;
 * - callers for the same workspace and credentials share one request in flight (single-flight). That request is not
 *   tied to any caller's signal: one caller hanging up must not fail the fetch for the others; each caller stops
 *   waiting on its own signal instead;
 * - `invalidate` forgets the entry and detaches a request in flight, whose result then reaches its waiting callers
 *   but is not stored.
 *
 * Deadlines: the manifest GET has MANIFEST_TIMEOUT_MS, the phone channel's 3.5 s (protocol §8 gives it none, and a turn
 * never waits past its channel's deadline). A tool call has TOOL_CALL_TIMEOUT_MS in all, from `call()` to its
 * outcome: when the manifest has to be fetched first, the POST gets what is left.
 */
import { createHash } from 'node:crypto';
import { AppError, errorText } from '../errors.ts';
import {
  BOTLINK_USER_AGENT,
  MANIFEST_CACHE_MS,
  MANIFEST_STALE_MS,
  MANIFEST_TIMEOUT_MS,
  MAX_RESPONSE_BYTES,
  MAX_TOOL_RESULT_CHARS,
  SENT_AT_HEADER,
  SIGNATURE_HEADER,
  TOOL_CALL_TIMEOUT_MS,
} from '../limits.ts';
import type { Metrics } from '../metrics.ts';
import { OutboundError } from '../net/guarded-client.ts';
import type { GuardedClient, GuardedResponse } from '../net/guarded-client.ts';
import { cleanJson } from '../text/outside-text.ts';
import { cutToChars } from '../text/cut.ts';
import { normaliseLanguage } from '../text/language.ts';
import { signedJsonRequest, signToolsRequest } from './signing.ts';
import { createToolSchemaCompiler } from './tool-schema.ts';
import { toolsUrl } from './tools-base.ts';
import { readToolManifest, unavailableManifest } from './tools-manifest.ts';
import type { LoadedManifest } from './tools-manifest.ts';
import type { ToolInvocation, ToolManifest, ToolOutcome, ToolsPort } from './tools-types.ts';
import { isObject } from '../json-value.ts';
import { addTraceHeaders } from '../tracing.ts';

/** How long a manifest that could not be fetched or read is remembered before it is asked for again: 30 s. */
export const MANIFEST_FAILURE_CACHE_MS = 30_000;
/** Most characters of the integrator's error text (protocol §2.5: "short failure text") passed to the AI. */
export const MAX_TOOL_ERROR_CHARS = 500;

export interface ToolsCredentials {
  endpointUrl: string;
  /** The shared key, as text (protocol §5.2). */
  key: string;
}

export interface ToolsClientOptions {
  http: GuardedClient;
  /**
   * The wall clock in ms since the epoch, for sent_at and for the manifest cache's expiry; default Date.now. Tests
   * pass a fake one to move through the 10 minutes without waiting. Deadlines run on real timers.
   */
  now?: () => number;
  /** Deadline of one tool call in ms; default TOOL_CALL_TIMEOUT_MS (protocol §8: 4 s). */
  toolTimeoutMs?: number;
  /** Deadline of the manifest GET in ms; default MANIFEST_TIMEOUT_MS (3.5 s), and never above `toolTimeoutMs`. */
  manifestTimeoutMs?: number;
  /** Accepted like the bot link client's, but src/metrics.ts has no tool metrics yet, so nothing is recorded. */
  metrics?: Metrics;
}

/** A tool call's outcome, with the technical reason behind a failure for the session record (never shown to the AI). */
export interface ToolCallOutcome extends ToolOutcome {
  detail?: string;
}

export interface ToolsClient extends ToolsPort {
  call(
    workspaceId: string,
    credentials: ToolsCredentials,
    call: ToolInvocation & { language: string; conversationId: string },
    signal?: AbortSignal,
  ): Promise<ToolCallOutcome>;
  /**
   * Start fetching the manifest now unless the cache holds a fresh one, and return at once (a call being set up: its
   * first turn then finds the manifest ready instead of waiting for it). Never throws.
   */
  prefetch(workspaceId: string, credentials: ToolsCredentials): void;
  /** GET the manifest now, past the cache and without storing it: for the dashboard's tools test. Never throws. */
  fetchManifestNow(credentials: ToolsCredentials, signal?: AbortSignal): Promise<ToolManifest>;
}

/** The tool call request of protocol §2.4; the property order here is the order in the JSON body. */
export interface ToolCallRequest {
  tool: string;
  args: Record<string, unknown>;
  language: string;
  session_id: string;
  sent_at: number;
}

/** The headers of the manifest GET (protocol §4.3, §5.4): its body is empty, so the signed data is `sent_at + '.'`. */
export function manifestHeaders(key: string, sentAt: number): Record<string, string> {
  return {
    'User-Agent': BOTLINK_USER_AGENT,
    [SENT_AT_HEADER]: String(sentAt),
    [SIGNATURE_HEADER]: signToolsRequest(key, sentAt, ''),
  };
}

/**
 * The exact body and headers of protocol §4.4. The signature is over the UTF-8 bytes of `body`, which must be sent
 * unchanged; X-Service-Sent-At carries the same sent_at as the body.
 */
export function encodeToolCall(request: ToolCallRequest, key: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify(request);
  return signedJsonRequest(body, { [SENT_AT_HEADER]: String(request.sent_at), [SIGNATURE_HEADER]: signToolsRequest(key, request.sent_at, body) });
}

type Verdict = Pick<ToolCallOutcome, 'ok' | 'content' | 'failure' | 'detail'>;

/**
 * What a tool's answer means for the AI (protocol §2.5, §7.3):
 * - 200 with `{ok: true, result}`: the result as text, its first MAX_TOOL_RESULT_CHARS characters (code points, cut
 *   at a character boundary by {@link cutToChars}). A string result is passed as the string itself, not JSON-quoted:
 *   it is most often a sentence meant to be read, and quotes and escapes would only cost the AI characters. Any other
 *   value is passed as compact JSON; a missing result is passed as `null` (the tool did succeed).
 * - 200 with `{ok: false, error}`: failure 'tool_error', the error text cut to MAX_TOOL_ERROR_CHARS.
 * - a status other than 200: 'status'; a body cut at 64 KB, not JSON, without a boolean `ok`, or with a result nested
 *   too deeply to write out as JSON: 'invalid_response'.
 */
export function interpretToolResponse(name: string, response: Pick<GuardedResponse, 'status' | 'body' | 'truncated'>): Verdict {
  if (response.status !== 200) {
    return {
      ok: false,
      failure: 'status',
      content: `The tool ${name} failed (its server answered HTTP ${response.status}).`,
      detail: `HTTP ${response.status}; a tool answers 200 (protocol §4.4)${response.status === 401 ? ': the integrator refused the signature or the time' : ''}.`,
    };
  }
  const unreadable = (detail: string): Verdict => ({
    ok: false,
    failure: 'invalid_response',
    content: `The tool ${name} gave an answer that could not be read.`,
    detail,
  });
  if (response.truncated) return unreadable('The answer is larger than 64 KB and was cut off there (protocol §7.2).');
  let parsed: unknown;
  try {
    // The integrator's text follows the outside-text rule from here on (src/text/outside-text.ts).
    parsed = cleanJson(JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(response.body)) as unknown);
  } catch {
    return unreadable('The answer is not valid JSON.');
  }
  if (!isObject(parsed) || typeof parsed.ok !== 'boolean') {
    return unreadable('The answer is not an object with a boolean "ok" (protocol §2.5).');
  }
  if (parsed.ok) {
    const result = Object.hasOwn(parsed, 'result') ? parsed.result : null;
    const text = typeof result === 'string' ? result : resultJson(result);
    if (text === undefined) return unreadable('The result is nested too deeply to be written out as JSON again.');
    return { ok: true, content: cutToChars(text, MAX_TOOL_RESULT_CHARS) };
  }
  const error = Object.hasOwn(parsed, 'error') ? parsed.error : undefined;
  return {
    ok: false,
    failure: 'tool_error',
    content:
      typeof error === 'string' && error.trim() !== ''
        ? cutToChars(error, MAX_TOOL_ERROR_CHARS)
        : `The tool ${name} failed without saying why.`,
  };
}

/**
 * A result as compact JSON. JSON.parse reads nesting of any depth, but JSON.stringify runs out of stack a few thousand
 * levels down, and 64 KB of brackets are some 30,000 levels: such a result is unreadable rather than a crash.
 */
function resultJson(result: unknown): string | undefined {
  try {
    return JSON.stringify(result);
  } catch {
    return undefined;
  }
}

/** A failure of the HTTP client (or our own) as an outcome; the AI gets a plain sentence, the record the details. */
function failureVerdict(name: string, err: unknown, timeoutMs: number): Verdict {
  if (err instanceof OutboundError) {
    const content =
      err.reason === 'timeout'
        ? `The tool ${name} did not answer within ${timeoutMs / 1000} seconds.`
        : err.reason === 'aborted'
          ? `The call to ${name} was cancelled.`
          : `The tool ${name} could not be reached.`;
    return { ok: false, failure: err.reason, content, detail: err.message };
  }
  if (err instanceof AppError && err.code === 'invalid_url') {
    return { ok: false, failure: 'invalid_url', content: `The tool ${name} could not be reached.`, detail: err.message };
  }
  // Nothing we know of ends here; if something does, the conversation still goes on (protocol §1.8). ToolOutcome has no
  // failure for our own faults, so the nearest one is used and the detail says what happened.
  return {
    ok: false,
    failure: 'invalid_response',
    content: `The tool ${name} could not be used because of an internal error.`,
    detail: `Internal error: ${errorText(err)}`,
  };
}

type Waited<T> = { kind: 'done'; value: T } | { kind: 'timeout' } | { kind: 'aborted' };

/** Wait for `work`, at most `timeoutMs` (null: no limit) and until `signal` aborts; rejects only if `work` does. */
function waitFor<T>(work: Promise<T>, timeoutMs: number | null, signal: AbortSignal | undefined): Promise<Waited<T>> {
  if (signal?.aborted === true) return Promise.resolve({ kind: 'aborted' });
  return new Promise((resolve, reject) => {
    const cleanUp = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const finish = (waited: Waited<T>): void => {
      cleanUp();
      resolve(waited);
    };
    const onAbort = (): void => finish({ kind: 'aborted' });
    const timer = timeoutMs === null ? undefined : setTimeout(() => finish({ kind: 'timeout' }), Math.max(0, timeoutMs));
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => finish({ kind: 'done', value }),
      (err: unknown) => {
        cleanUp();
        reject(err);
      },
    );
  });
}

/** What the cache compares: the URL as given and a SHA-256 of the key (the key itself is kept nowhere here). */
function fingerprintOf(credentials: ToolsCredentials): string {
  return `${credentials.endpointUrl}\n${createHash('sha256').update(credentials.key, 'utf8').digest('hex')}`;
}

interface CacheEntry {
  fingerprint: string;
  loaded: LoadedManifest;
  expiresAt: number;
}

interface Flight {
  fingerprint: string;
  promise: Promise<LoadedManifest>;
}

export function createToolsClient(options: ToolsClientOptions): ToolsClient {
  const { http } = options;
  const now = options.now ?? Date.now;
  const timeoutMs = options.toolTimeoutMs ?? TOOL_CALL_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new RangeError('toolTimeoutMs must be a positive number of ms');
  const manifestTimeoutMs = Math.min(options.manifestTimeoutMs ?? MANIFEST_TIMEOUT_MS, timeoutMs);
  // One Ajv (through the compiler) per tools client; each fetch compiles its tools once (./tool-schema.ts).
  const compiler = createToolSchemaCompiler();
  const cache = new Map<string, CacheEntry>();
  const inFlight = new Map<string, Flight>();
  let lastSweep = now();

  /** GET {tools_base}/manifest and read it; never rejects. */
  async function fetchManifest(credentials: ToolsCredentials, signal?: AbortSignal): Promise<LoadedManifest> {
    try {
      const sentAt = Math.floor(now() / 1000);
      const response = await http.request({
        method: 'GET',
        url: toolsUrl(credentials.endpointUrl, '/manifest'),
        headers: addTraceHeaders(manifestHeaders(credentials.key, sentAt)),
        timeoutMs: manifestTimeoutMs,
        maxBytes: MAX_RESPONSE_BYTES, // protocol §7.2: cut off at 64 KB
        ...(signal ? { signal } : {}),
      });
      return readToolManifest(response, compiler, now());
    } catch (err) {
      const error =
        err instanceof OutboundError || (err instanceof AppError && err.code === 'invalid_url')
          ? err.message
          : `The tools manifest could not be fetched: ${errorText(err)}`;
      return { manifest: unavailableManifest(error, now()), checks: new Map() };
    }
  }

  /** Entries past their time to be offered stale are dropped, at most once per cache period. */
  function sweep(t: number): void {
    if (t - lastSweep < MANIFEST_CACHE_MS) return;
    lastSweep = t;
    for (const [workspaceId, entry] of cache) if (entry.expiresAt + MANIFEST_STALE_MS < t) cache.delete(workspaceId);
  }

  /** The request in flight for these credentials, or a new one whose result is stored unless it was detached. */
  function refresh(workspaceId: string, fingerprint: string, credentials: ToolsCredentials): Promise<LoadedManifest> {
    const running = inFlight.get(workspaceId);
    if (running !== undefined && running.fingerprint === fingerprint) return running.promise;
    // A request in flight for other credentials is detached: its result is not stored over this one's.
    const promise = fetchManifest(credentials).then((loaded) => {
      if (inFlight.get(workspaceId) === flight) {
        inFlight.delete(workspaceId);
        const ttl = loaded.manifest.status === 'ok' ? MANIFEST_CACHE_MS : MANIFEST_FAILURE_CACHE_MS;
        cache.set(workspaceId, { fingerprint, loaded, expiresAt: loaded.manifest.fetchedAt + ttl });
      }
      return loaded;
    });
    const flight: Flight = { fingerprint, promise };
    inFlight.set(workspaceId, flight);
    return promise;
  }

  /**
   * The workspace's manifest: from the cache while fresh; a stale one that was read fine while a new fetch runs;
   * otherwise the request in flight or a new one. Never rejects.
   */
  function load(workspaceId: string, credentials: ToolsCredentials): Promise<LoadedManifest> {
    const t = now();
    sweep(t);
    const fingerprint = fingerprintOf(credentials);
    const entry = cache.get(workspaceId);
    if (entry !== undefined && entry.fingerprint === fingerprint) {
      if (t <= entry.expiresAt) return Promise.resolve(entry.loaded);
      if (entry.loaded.manifest.status === 'ok' && t <= entry.expiresAt + MANIFEST_STALE_MS) {
        void refresh(workspaceId, fingerprint, credentials);
        return Promise.resolve(entry.loaded);
      }
    }
    return refresh(workspaceId, fingerprint, credentials);
  }

  async function call(
    workspaceId: string,
    credentials: ToolsCredentials,
    invocation: ToolInvocation & { language: string; conversationId: string },
    signal?: AbortSignal,
  ): Promise<ToolCallOutcome> {
    const started = performance.now();
    const name = cutToChars(String(invocation.name), 100);
    let httpStatus: number | null = null;
    const outcome = (verdict: Verdict): ToolCallOutcome => ({
      id: invocation.id,
      name: invocation.name,
      ...verdict,
      latencyMs: performance.now() - started,
      httpStatus,
    });
    try {
      const waited = await waitFor(load(workspaceId, credentials), timeoutMs, signal);
      if (waited.kind === 'timeout') {
        return outcome({
          ok: false,
          failure: 'timeout',
          content: `The tool ${name} did not answer within ${timeoutMs / 1000} seconds.`,
          detail: 'The tools manifest did not arrive before the call\'s deadline; nothing was sent.',
        });
      }
      if (waited.kind === 'aborted') {
        return outcome({ ok: false, failure: 'aborted', content: `The call to ${name} was cancelled.`, detail: 'Cancelled before it was sent.' });
      }
      const { manifest, checks } = waited.value;

      // Nothing is sent for a tool the manifest does not list, or for arguments its schema refuses.
      const check = checks.get(invocation.name);
      if (check === undefined) {
        const unavailable = manifest.status === 'unavailable';
        return outcome({
          ok: false,
          failure: 'unknown_tool',
          content: `There is no tool named ${name}.${unavailable ? ' The tools cannot be used right now.' : ''}`,
          ...(unavailable && manifest.error !== undefined ? { detail: manifest.error } : {}),
        });
      }
      // An AI that sends no arguments at all means "none", as for a tool without parameters.
      const args = invocation.args === undefined ? {} : invocation.args;
      const verdict = check(args);
      if (!verdict.ok) {
        return outcome({
          ok: false,
          failure: 'invalid_args',
          content: `The arguments for ${name} are not valid: ${verdict.errors.join('; ')}. Correct them and call ${name} again.`,
        });
      }

      const remainingMs = timeoutMs - (performance.now() - started);
      if (remainingMs < 1) {
        return outcome({
          ok: false,
          failure: 'timeout',
          content: `The tool ${name} did not answer within ${timeoutMs / 1000} seconds.`,
          detail: 'The deadline passed while the tools manifest was fetched; nothing was sent.',
        });
      }
      const { body, headers } = encodeToolCall(
        {
          tool: invocation.name,
          args: args as Record<string, unknown>,
          language: normaliseLanguage(invocation.language), // protocol §2.4: two-letter code
          session_id: invocation.conversationId,
          sent_at: Math.floor(now() / 1000),
        },
        credentials.key,
      );
      const response = await http.request({
        method: 'POST',
        url: toolsUrl(credentials.endpointUrl, ''),
        headers: addTraceHeaders(headers),
        body,
        timeoutMs: Math.ceil(remainingMs),
        maxBytes: MAX_RESPONSE_BYTES,
        ...(signal ? { signal } : {}),
      });
      httpStatus = response.status;
      return outcome(interpretToolResponse(name, response));
    } catch (err) {
      return outcome(failureVerdict(name, err, timeoutMs));
    }
  }

  return {
    async manifest(workspaceId, credentials, signal, waitMs) {
      try {
        const waited = await waitFor(load(workspaceId, credentials), waitMs ?? null, signal);
        if (waited.kind === 'done') return waited.value.manifest;
        if (waited.kind === 'timeout') return unavailableManifest(`The tools manifest did not arrive within the turn's ${waitMs} ms.`, now());
      } catch (err) {
        // Date.now, not `now`: the injected clock may be what failed.
        return unavailableManifest(`The tools manifest could not be loaded: ${errorText(err)}`, Date.now());
      }
      // This caller stopped waiting; the shared request goes on for the others and fills the cache.
      return unavailableManifest('The request for the tools manifest was cancelled.', now());
    },
    call,
    prefetch(workspaceId, credentials) {
      void load(workspaceId, credentials);
    },
    invalidate(workspaceId) {
      cache.delete(workspaceId);
      inFlight.delete(workspaceId);
    },
    async fetchManifestNow(credentials, signal) {
      return (await fetchManifest(credentials, signal)).manifest;
    },
  };
}
