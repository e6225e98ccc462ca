// @ts-check
/**
 * The dashboard's only way to the service: same-origin JSON calls with the signed-in user's bearer token, every
 * error turned into its message, and a 401 on every call ending the sign-in. The token lives in sessionStorage (this
 * tab only, gone when it closes).
 */

/** @import * as Api from './api-types' */

/** @typedef {'owner' | 'admin' | 'agent' | 'manager'} Role  'manager': an owner or admin signed in with a token. */
/**
 * @typedef {{ token: string, role: Role, email?: string, userId?: string, name?: string | null, workspace?: string, timeZone?: string | null }} Session
 * `name`: the user's own name (null: none given); `timeZone`: the workspace's, every time is shown in it (time.js;
 * null: none chosen, the browser's; absent: not read yet).
 */

const STORAGE_KEY = 'botlink.dashboard.session';

/** @returns {Session | null} */
export function currentSession() {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    const parsed = raw ? JSON.parse(raw) : null;
    return parsed && typeof parsed.token === 'string' ? parsed : null;
  } catch {
    return null;
  }
}

/** @param {Session} session */
export function saveSession(session) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession() {
  sessionStorage.removeItem(STORAGE_KEY);
}

/** @param {Session | null} session */
export function isManager(session) {
  return session != null && session.role !== 'agent';
}

export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message @param {unknown} [details] */
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
    /** The user who holds a conversation (409 `taken`). @type {{ user_id?: string, email?: string, name?: string | null } | undefined} */
    this.holder = undefined;
  }
}

/** @type {(message: string) => void} */
let onUnauthorized = () => {};
/** Called when the service answers 401 to the signed-in token. @param {(message: string) => void} handler */
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

/**
 * @typedef {object} CallOptions
 * @property {unknown} [body] sent as JSON
 * @property {FormData} [form] sent as multipart/form-data (an upload), instead of `body`
 * @property {Record<string, string>} [headers]
 * @property {string} [token] this token instead of the session's
 * @property {boolean} [signIn] a sign-in call: its 401 is a wrong password, not an ended session
 * @property {AbortSignal} [signal]
 */

/**
 * The answer's type is the caller's to say, from the API's types (api-types.d.ts, generated from the OpenAPI document
 * by `npm run dashboard-types`): a constant typed GetWorkspace given `await api('GET', '/v1/workspace')` is one.
 * @template [T=unknown]
 * @param {string} method @param {string} path @param {CallOptions} [options]
 * @returns {Promise<T>} the parsed JSON answer (null when empty)
 */
export async function api(method, path, options = {}) {
  const res = await send(method, path, options);
  const data = parseJson(await res.text());
  if (!res.ok) throw failure(res, data, options);
  return /** @type {T} */ (data);
}

/** @param {string} text @returns {unknown} */
function parseJson(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** @param {string} method @param {string} path @param {CallOptions} options */
async function send(method, path, options) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', ...options.headers };
  const token = options.token ?? (options.signIn ? undefined : currentSession()?.token);
  if (token) headers.authorization = `Bearer ${token}`;
  // A form's content type (with its boundary) is set by the browser.
  if (options.body !== undefined && !options.form) headers['content-type'] = 'application/json';
  try {
    return await fetch(path, {
      method,
      headers,
      body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
      credentials: 'omit',
      cache: 'no-store',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    throw new ApiError(0, 'network', 'The service could not be reached. Check the connection and try again.');
  }
}

/**
 * The error body (docs/interfaces.md, "Errors everywhere"), as far as it is one; `holder` beside it on a 409 `taken`.
 * @typedef {Partial<Api.ErrorBody['error']> & { holder?: unknown }} ErrorFields
 */

/** @param {Response} res @param {unknown} data the parsed body @param {CallOptions} options */
function failure(res, data, options) {
  const body = data && typeof data === 'object' && 'error' in data ? data.error : undefined;
  /** @type {ErrorFields | undefined} */
  const error = body && typeof body === 'object' ? body : undefined;
  let message = typeof error?.message === 'string' ? error.message : `The service answered ${res.status} ${res.statusText}.`.replace(' .', '.');
  if (res.status === 429) {
    const retry = res.headers.get('retry-after');
    if (retry) message += ` Try again in ${retry} seconds.`;
  }
  const err = new ApiError(res.status, typeof error?.code === 'string' ? error.code : `http_${res.status}`, message, error?.details);
  if (error?.holder && typeof error.holder === 'object') err.holder = /** @type {NonNullable<ApiError['holder']>} */ (error.holder);
  if (res.status === 401 && !options.signIn && !options.token) onUnauthorized(message);
  return err;
}

/** A stream that fails again at once is asked for again after twice the wait, up to this. */
const FOLLOW_MAX_WAIT_MS = 30_000;

/**
 * @typedef {object} FollowOptions
 * @property {AbortSignal} signal the screen's: leaving it ends the stream and every wait
 * @property {(type: string, data: unknown) => void} onEvent each event's name and its JSON data (an event whose data
 *   is not JSON is not one of ours and is skipped)
 * @property {() => void} [onConnect] each time the stream is asked for
 * @property {(err: unknown) => void} [onInterrupted] the stream could not be opened or broke; it is asked for again
 * @property {() => void} [onGap] after the wait that follows each end or failure, before the stream is asked for
 *   again: what changed meanwhile is read here
 * @property {number} [retryMs] the first wait after an end or a failure (default 2 s); it doubles while the stream
 *   fails to open, up to FOLLOW_MAX_WAIT_MS, and starts again once a stream opened
 */

/**
 * Follows a live Server-Sent Events stream of the service (GET /v1/inbox/events, GET /v1/sessions/{id}/events) until
 * the signal aborts: read with fetch (EventSource cannot send the Authorization header), asked for again after an end
 * or a failure with a growing wait, and given up when the service says there is nothing to follow for this user (401:
 * the sign-in ended; 403; 404: no such conversation). The one loop of every screen's live view.
 * @param {string} path @param {FollowOptions} options
 */
export async function followEvents(path, options) {
  const { signal } = options;
  const firstWait = options.retryMs ?? 2_000;
  let failedInARow = 0;
  while (!signal.aborted) {
    let opened = false;
    try {
      options.onConnect?.();
      await readEvents(path, options.onEvent, signal, () => (opened = true));
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && (err.status === 401 || err.status === 403 || err.status === 404)) return;
      options.onInterrupted?.(err);
    }
    failedInARow = opened ? 0 : failedInARow + 1;
    await pause(Math.min(firstWait * 2 ** Math.max(0, failedInARow - 1), FOLLOW_MAX_WAIT_MS), signal);
    if (signal.aborted) return;
    options.onGap?.();
  }
}

/** Waits `ms`, or less when the signal aborts first. @param {number} ms @param {AbortSignal} signal */
function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(undefined);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(undefined);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/**
 * Reads one Server-Sent Events stream. Resolves when the stream ends; rejects with an ApiError when it cannot be
 * opened.
 * @param {string} path @param {(type: string, data: unknown) => void} onEvent @param {AbortSignal} signal
 * @param {() => void} opened called once the service answered with the stream
 */
async function readEvents(path, onEvent, signal, opened) {
  const res = await send('GET', path, { headers: { accept: 'text/event-stream' }, signal });
  if (!res.ok || !res.body) throw failure(res, parseJson(await res.text()), {});
  opened();
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      /** @type {unknown} */
      let parsed;
      try {
        parsed = JSON.parse(data.join('\n'));
      } catch {
        // A line that is not JSON is not one of ours; the next event still counts.
        continue;
      }
      try {
        onEvent(type, parsed);
      } catch (err) {
        // A screen's mistake with one event does not end its live view.
        console.error(err);
      }
    }
  }
}

/**
 * What GET /v1/workspace says is set up (`configured`): GET /v1/integration, GET /v1/keys/sync and GET /v1/whatsapp
 * answer 404 when absent, which the browser logs as an error, so screens ask for them only when they exist.
 * @returns {Promise<{ integration: boolean, sync_key: boolean, whatsapp: boolean }>}
 */
export async function configured() {
  /** @type {Api.GetWorkspace | null} */
  const workspace = await api('GET', '/v1/workspace');
  const set = workspace?.configured;
  return { integration: set?.integration === true, sync_key: set?.sync_key === true, whatsapp: set?.whatsapp === true };
}

/**
 * A file the service makes (the Overview's export): the answer's bytes and the name it suggests.
 * @param {string} path @returns {Promise<{ blob: Blob, name: string }>}
 */
export async function apiFile(path) {
  const res = await send('GET', path, { headers: { accept: '*/*' } });
  if (!res.ok) throw failure(res, parseJson(await res.text()), {});
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'export';
  return { blob: await res.blob(), name };
}
