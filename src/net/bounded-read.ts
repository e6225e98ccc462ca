/**
 * Reading an HTTP answer within one deadline and a byte cap: shared by every client we have (the guarded client for
 * integrator URLs, the LLM adapter, the WhatsApp Graph client). undici honours a request's AbortSignal only once the
 * request is on a socket, so the deadline is also enforced around it; bodies are read up to a cap and then dropped.
 */
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { BotlinkError } from '../errors.ts';

/** One request's deadline over connect, headers and body, joined with the caller's signal. */
export interface Deadline {
  /** Aborts at the deadline or when the caller's signal does: give it to the request and to every read. */
  readonly signal: AbortSignal;
  /** The request was cut by the deadline (not by the caller). */
  timedOut(): boolean;
  /** The caller cancelled the request before the deadline. */
  cancelled(): boolean;
}

export function startDeadline(timeoutMs: number, callerSignal?: AbortSignal | null): Deadline {
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = callerSignal == null ? deadline : AbortSignal.any([deadline, callerSignal]);
  const timedOut = () => deadline.aborted && signal.reason === deadline.reason;
  return { signal, timedOut, cancelled: () => signal.aborted && !timedOut() };
}

/**
 * An undici Agent of a client's own (never the global dispatcher) whose connect attempt is bounded by the same
 * deadline as the request (undici's own default is 10 s).
 */
export function deadlineAgent(timeoutMs: number, options: { connections?: number } = {}): Agent {
  return new Agent({ ...options, connectTimeout: timeoutMs });
}

/** Sends the request on `agent` until `signal` aborts (see untilAborted); the body is left for a capped read. */
export function requestUntil(agent: Dispatcher, request: Omit<Dispatcher.RequestOptions, 'signal'>, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
  return untilAborted(agent.request({ ...request, signal }), signal, (late) => discard(late.body));
}

/**
 * Settle with `work`, or reject as soon as `signal` aborts. undici honours a request's signal only once the request
 * is on a socket; while the socket is still being opened an abort is merely noted, so the deadline is enforced here
 * too. A response that still arrives later is discarded.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, discardLate: (value: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const onAbort = () => {
      settled = true;
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (settled) discardLate(value);
        else resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!settled) reject(err);
      },
    );
  });
}

/** Stop reading and close the connection (undici reports a destroyed unfinished body as a RequestAbortedError). */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/**
 * Read at most `maxBytes`; past that, destroy the stream so the rest is never downloaded. Plain 'data' events: an
 * async iterator costs a promise per chunk on the hottest path of every request.
 */
export function readCapped(body: Readable, maxBytes: number, signal: AbortSignal): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: { body: Buffer; truncated: boolean } | Error) => {
      body.off('data', onData).off('end', onEnd).off('error', onError);
      signal.removeEventListener('abort', onAbort);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        discard(body);
        finish({ body: Buffer.concat(chunks, maxBytes), truncated: true });
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = () => finish({ body: Buffer.concat(chunks, size), truncated: false });
    const onError = (err: Error) => finish(err);
    // undici destroys the body when the signal aborts; the reason travels with the error, but say it here too so a
    // stream that is merely paused cannot outlive the deadline.
    const onAbort = () => {
      discard(body);
      finish(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    body.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** What {@link readEach} fails with when the body passes its cap. */
export class BodyTooLargeError extends BotlinkError {
  constructor(maxBytes: number) {
    super('body_too_large', `The body exceeded its cap of ${maxBytes} bytes.`);
  }
}

/**
 * Hands each chunk to `onChunk` as it arrives (a streamed answer is used before it ends), up to `maxBytes` in all;
 * past the cap, or when `onChunk` throws, the stream is destroyed and the promise rejects. When `onChunk` answers true
 * the reading is done: the promise resolves and the rest of the body is drained in the background (so the connection
 * can be used again; a server that never ends it is cut by the request's own deadline).
 */
export function readEach(body: Readable, maxBytes: number, signal: AbortSignal, onChunk: (chunk: Buffer) => boolean | void): Promise<void> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const finish = (err?: unknown, drain = false) => {
      body.off('data', onData).off('end', onEnd).off('error', finish);
      signal.removeEventListener('abort', onAbort);
      if (err === undefined) {
        if (drain) body.on('error', () => {}).resume();
        return resolve();
      }
      discard(body);
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(new BodyTooLargeError(maxBytes));
      let stop: boolean | void;
      try {
        stop = onChunk(chunk);
      } catch (err) {
        return finish(err);
      }
      if (stop === true) finish(undefined, true);
    };
    const onEnd = () => finish();
    const onAbort = () => finish(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    body.on('data', onData).on('end', onEnd).on('error', finish);
  });
}
