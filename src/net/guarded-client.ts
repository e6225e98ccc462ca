/**
 * The one HTTP client for every URL an integrator gives us (protocol §4: "All are HTTPS, publicly reachable; internal or
 * local addresses are refused").
 *
 * - An undici `Agent` of our own, never the global dispatcher, so nothing else in the process shares its rules.
 * - The destination is checked where the socket is opened: inside the connector's DNS `lookup`. The addresses that
 *   are checked are the very addresses connected to, so DNS rebinding (public at save time, 127.0.0.1 at call time)
 *   finds no window. Node does not call `lookup` for IP literals, so those are checked before the request starts.
 * - A host name is refused when ANY address it resolves to is refused: simplest and safest (with autoSelectFamily
 *   Node may try every address, so filtering out the bad ones would still trust a name that points inward).
 * - Redirects are never followed: a 3xx is returned to the caller as a status (undici's Agent follows none unless a
 *   redirect interceptor is composed in, and we compose none).
 * - One deadline per request (a timer) covers connect, headers and body; the caller's signal ends it too.
 * - The body is kept up to `maxBytes` and then the request is aborted, which closes its connection (protocol §7.2: "a
 *   response beyond 64 KB is cut off at that size").
 * - Requests go through undici's `dispatch` with a handler of ours (CappedHandler), not `request`: no body stream, no
 *   abort signal handed to undici, one timer. That is most of what the Bot Link client spent beyond plain undici
 *   (docs/performance.md, "botlink-client").
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { createSecureContext, getCACertificates } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { BotlinkError, type FailureReason } from '../errors.ts';
import { CHANNEL_TIMEOUT_MS } from '../limits.ts';
import type { AddressPolicy } from './address-policy.ts';
import { createAddressPolicy, inspectUrl, literalAddress, refusedAddressReason } from './address-policy.ts';
import { untilAborted } from './bounded-read.ts';

export type OutboundFailureReason = Extract<FailureReason, 'invalid_url' | 'refused_address' | 'timeout' | 'tls' | 'connection' | 'aborted'>;

/** Every failure of {@link GuardedClient.request}; `message` is one sentence that can be shown to an integrator. */
export class OutboundError extends BotlinkError {
  readonly reason: OutboundFailureReason;
  /**
   * The request gave up while it waited for one of the origin's connections (see GuardedClient's #lines) and never
   * left this process: the host was not asked, so its failure says nothing about the host (endpoint health ignores it).
   */
  readonly neverSent: boolean;

  constructor(reason: OutboundFailureReason, message: string, options?: ErrorOptions & { neverSent?: boolean }) {
    super('outbound', message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.reason = reason;
    this.neverSent = options?.neverSent ?? false;
  }
}

/** Resolves a host name to every address it has (like `dns.promises.lookup(host, { all: true })`). */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: 4 | 6 }[]>;

export interface GuardedClientOptions {
  /** `OUTBOUND_ALLOW`: CIDRs or host names exempt from the public-address rule (tests and development only). */
  allow?: readonly string[];
  /** DNS resolution; default `node:dns/promises` `lookup` with `all: true`. Tests inject one to steer names. */
  lookup?: ResolveHost;
  /** Most sockets open at once to one origin. Default 64. */
  connectionsPerOrigin?: number;
  /**
   * Extra CA certificates (PEM) trusted on top of Node's default store, for tests only: production trusts a custom
   * CA through Node's own NODE_EXTRA_CA_CERTS (docs/interfaces.md, configuration), which is read once at process start.
   */
  ca?: string | readonly string[];
  /** How long `validateUrl` waits for DNS; default VALIDATE_DNS_TIMEOUT_MS. */
  validateDnsTimeoutMs?: number;
}

export interface GuardedRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** One deadline in milliseconds for connect, headers and body together. */
  timeoutMs: number;
  /** Most body bytes kept; reading stops there and the rest is never downloaded. */
  maxBytes: number;
  /** Cancellation by the caller; ends the request with reason 'aborted'. */
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** At most `maxBytes`. */
  body: Buffer;
  /** True when the body had more than `maxBytes` and was cut off. */
  truncated: boolean;
  /** Milliseconds from the start of `request()`: to the status line and headers, and to the end of the body. */
  timings: { firstByteMs: number; totalMs: number };
}

const DEFAULT_CONNECTIONS_PER_ORIGIN = 64;

/**
 * The requests to one origin: how many are on a connection (at most the agent's `connections`), and those waiting for
 * one, first come first served. `head` indexes the next waiter, so taking one is O(1).
 */
interface OriginLine {
  active: number;
  waiting: (() => void)[];
  head: number;
}
/** Most URL verdicts a client keeps (see GuardedClient's #inspected). */
const MAX_INSPECTED_URLS = 1024;

/** What a request uses of a URL that passed {@link inspectUrl}. */
interface InspectedUrl {
  host: string;
  origin: string;
  /** Path and query string, as undici's `path`. */
  path: string;
}
/** How long saving a URL waits for its DNS answer. */
export const VALIDATE_DNS_TIMEOUT_MS = 5_000;

/**
 * Raised inside the connector's lookup when a host name resolves to a refused address; undici hands it back
 * unchanged as the request's error, and {@link GuardedClient.request} turns it into an OutboundError.
 */
export class RefusedAddressError extends BotlinkError {
  readonly hostname: string;
  readonly address: string;

  /**
   * The message names the kind of address, never the address: it reaches the people who typed the URL (the dashboard's
   * 422, replay's answers), and a name's internal DNS answer is none of their business (docs/integrators.md).
   */
  constructor(hostname: string, address: string, reason: string) {
    super('refused_address', `${hostname} resolves to ${reason.startsWith(`${address} is `) ? reason.slice(address.length + 4) : 'an address that is not public'}, which is refused`);
    this.hostname = hostname;
    this.address = address;
  }
}

const defaultResolve: ResolveHost = async (hostname) => {
  const addresses = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return addresses.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/** Resolve a host name and check every address; throws RefusedAddressError if any is refused. */
async function resolveChecked(
  hostname: string,
  resolve: ResolveHost,
  policy: AddressPolicy,
): Promise<{ address: string; family: 4 | 6 }[]> {
  const addresses = await resolve(hostname);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND', hostname });
  }
  for (const { address } of addresses) {
    const reason = refusedAddressReason(address, policy, hostname);
    if (reason != null) throw new RefusedAddressError(hostname, address, reason);
  }
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` given to the connector (net/tls `connect` options). Node calls it with `all: true` when
 * autoSelectFamily is on (the default since Node 20) and without when it is off, so both answers are produced.
 */
export function createGuardedLookup(
  resolve: ResolveHost,
  policy: AddressPolicy,
): (hostname: string, options: LookupOptions, callback: LookupCallback) => void {
  return (hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    resolveChecked(hostname, resolve, policy).then(
      (addresses) => {
        const wanted = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        const first = wanted[0];
        if (first === undefined) {
          const err = Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' });
          callback(err, options.all === true ? [] : '', 0);
        } else if (options.all === true) {
          callback(null, wanted);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all === true ? [] : '', 0),
    );
  };
}

export class GuardedClient {
  readonly #policy: AddressPolicy;
  readonly #resolve: ResolveHost;
  readonly #agent: Agent;
  readonly #validateDnsTimeoutMs: number;
  /** Requests between their start and their end, and close()'s wait for the last of them to end. */
  #inFlight = 0;
  readonly #connections: number;
  /**
   * Requests wait for a connection here, not in undici's pool queue. A request given up (its deadline, or the caller)
   * while in undici's queue is aborted the moment a socket frees, and an HTTP/1.1 abort destroys that socket: under a
   * burst every late request cost a healthy keep-alive connection and the next request a new TLS handshake, which
   * made the burst worse (the phone bench's engine spent a third of its CPU on handshakes and never recovered). A
   * request given up here is simply dropped from the line; the sockets stay.
   */
  readonly #lines = new Map<string, OriginLine>();
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;
  /**
   * The verdict of {@link inspectUrl} on each URL already called, by its text: it depends on nothing but the text and
   * this client's policy, which never changes, and parsing the URL and judging a literal address again on every
   * request was some 5 % of the Bot Link client's CPU per request (a --cpu-prof of bench/repro/botlink-client-profile.ts).
   * Host names are still checked at every connect.
   */
  readonly #inspected = new Map<string, InspectedUrl>();
  #closed = false;

  constructor(options: GuardedClientOptions = {}) {
    this.#policy = createAddressPolicy(options.allow ?? []);
    this.#resolve = options.lookup ?? defaultResolve;
    this.#validateDnsTimeoutMs = options.validateDnsTimeoutMs ?? VALIDATE_DNS_TIMEOUT_MS;
    this.#connections = options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN;
    this.#agent = new Agent({
      connections: this.#connections,
      // HTTP/1.1 only: every integrator speaks it, and one request per connection means destroying a cut-off body
      // closes exactly that connection.
      allowH2: false,
      // undici keeps opening a socket after the request that wanted it gave up (see CappedHandler); no request of ours
      // waits longer than the channel message time-out (protocol §8: 6 s), so an attempt past that serves nobody.
      connectTimeout: CHANNEL_TIMEOUT_MS,
      connect: {
        lookup: createGuardedLookup(this.#resolve, this.#policy),
        // One secure context for every connection, built here: without it each new connection builds its own
        // (tls.connect → createSecureContext), which was the phone bench's top self time once calls reconnected.
        // A `ca` option replaces the default store, so the defaults (bundled, NODE_EXTRA_CA_CERTS, and
        // whatever setDefaultCACertificates set before this client was made) are kept in it.
        secureContext: createSecureContext({ ca: [...getCACertificates('default'), ...(options.ca === undefined ? [] : [options.ca].flat())] }),
      },
    });
  }

  /** Resolves the host now and checks every address: used when a URL is saved (dashboard 422 with the reason). */
  async validateUrl(url: string): Promise<{ ok: true; url: URL } | { ok: false; reason: string }> {
    const checked = inspectUrl(url, this.#policy);
    if (!checked.ok) return { ok: false, reason: checked.reason };
    const { hostname } = checked.url;
    if (literalAddress(hostname) != null) return { ok: true, url: checked.url };
    try {
      // A hung resolver must not hang the dashboard request that saves the URL.
      const deadline = AbortSignal.timeout(this.#validateDnsTimeoutMs);
      await untilAborted(resolveChecked(hostname, this.#resolve, this.#policy), deadline, () => {});
    } catch (err) {
      if (err instanceof RefusedAddressError) return { ok: false, reason: err.message };
      if ((err as Error).name === 'TimeoutError') return { ok: false, reason: `${hostname} did not resolve within ${this.#validateDnsTimeoutMs} ms` };
      const code = (err as NodeJS.ErrnoException).code;
      return { ok: false, reason: `${hostname} could not be resolved${code == null ? '' : ` (${code})`}` };
    }
    return { ok: true, url: checked.url };
  }

  /**
   * Throws OutboundError on any failure before a status line arrives; a non-2xx status is NOT an error. If the
   * deadline hits while reading the body, that is a 'timeout' OutboundError too.
   */
  async request(req: GuardedRequest): Promise<GuardedResponse> {
    if (this.#closed) throw new OutboundError('connection', 'The outbound client is closed.');
    const started = performance.now();
    if (!(Number.isInteger(req.maxBytes) && req.maxBytes >= 0)) {
      throw new RangeError('maxBytes must be an integer >= 0');
    }
    const url = this.#inspect(req.url);
    const callerSignal = req.signal;
    if (callerSignal?.aborted === true) {
      throw new OutboundError('aborted', `The request to ${url.host} was cancelled before it started.`, {
        cause: callerSignal.reason,
      });
    }
    // Counted from here: nothing above awaits, so a request that failed before this point has already ended.
    this.#inFlight++;
    const { promise, resolve, reject } = Promise.withResolvers<GuardedResponse>();
    const handler = new CappedHandler(req.maxBytes, started, resolve, reject);
    // The reason is made only when the deadline fires: a DOMException captures a stack, 9 % of a request's CPU.
    const timer = setTimeout(() => {
      handler.giveUp('deadline', new DOMException(`The deadline of ${req.timeoutMs} ms passed.`, 'TimeoutError'));
    }, req.timeoutMs);
    const onCallerAbort = () => handler.giveUp('caller', callerSignal?.reason);
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      this.#enqueue(url, req, handler);
      return await promise;
    } catch (err) {
      throw classify(err, { host: url.host, timeoutMs: req.timeoutMs, gaveUp: handler.gaveUpFor, connections: this.#connections }, handler.phase);
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
      if (--this.#inFlight === 0) this.#idle?.resolve();
    }
  }

  /** Dispatches the request now when one of its origin's connections is free, or puts it in the origin's line. */
  #enqueue(url: InspectedUrl, req: GuardedRequest, handler: CappedHandler): void {
    let line = this.#lines.get(url.origin);
    if (line === undefined) {
      line = { active: 0, waiting: [], head: 0 };
      this.#lines.set(url.origin, line);
    }
    const start = (): void => {
      if (handler.settled) return; // gave up while it waited: it never takes a connection
      line.active++;
      handler.phase = 'before the status line';
      handler.onDone = () => {
        line.active--;
        // Not from inside undici's callback: the connection that ended this request is marked free (or destroyed, on
        // an abort) only after the callback returns, so a request dispatched from within it found every connection
        // busy, waited in undici's own queue after all, and an abort there cost a socket again (the phone bench
        // answered 7 % of its prompts until this was deferred).
        queueMicrotask(() => this.#next(url.origin, line));
      };
      try {
        this.#agent.dispatch({ origin: url.origin, path: url.path, method: req.method, headers: req.headers, body: req.body ?? null }, handler);
      } catch (err) {
        handler.onResponseError(null, err as Error);
      }
    };
    if (line.active < this.#connections && line.head === line.waiting.length) {
      start();
    } else {
      handler.phase = 'waiting for a free connection';
      line.waiting.push(start);
    }
  }

  /** A connection of the origin freed: the next waiter that has not given up takes it. */
  #next(origin: string, line: OriginLine): void {
    while (line.active < this.#connections && line.head < line.waiting.length) {
      const start = line.waiting[line.head]!;
      line.waiting[line.head++] = taken;
      start();
    }
    if (line.head === line.waiting.length) {
      line.waiting.length = 0;
      line.head = 0;
      if (line.active === 0) this.#lines.delete(origin);
    } else if (line.head > 1024 && line.head * 2 > line.waiting.length) {
      line.waiting = line.waiting.slice(line.head);
      line.head = 0;
    }
  }

  /** The URL's parts a request needs, or the OutboundError that refuses it; see {@link GuardedClient.#inspected}. */
  #inspect(text: string): InspectedUrl {
    const known = this.#inspected.get(text);
    if (known !== undefined) return known;
    const checked = inspectUrl(text, this.#policy);
    if (!checked.ok) {
      const message =
        checked.failure === 'refused_address'
          ? `Refused to connect: ${checked.reason}.`
          : `The URL cannot be called: ${checked.reason}.`;
      throw new OutboundError(checked.failure, message);
    }
    const { host, origin, pathname, search } = checked.url;
    const url = { host, origin, path: `${pathname}${search}` };
    // Only URLs that pass are kept; a client calls a handful of them (one per integration), so the bound is a guard
    // against a caller with unbounded URLs (a query string per request), not an eviction policy.
    if (this.#inspected.size >= MAX_INSPECTED_URLS) this.#inspected.clear();
    this.#inspected.set(text, url);
    return url;
  }

  /**
   * Refuses new requests, lets those in flight finish (each ends by its own deadline), then drops idle sockets and
   * any connect attempt still running for a request that already gave up.
   */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#inFlight > 0) {
      this.#idle ??= Promise.withResolvers<void>();
      await this.#idle.promise;
    }
    await this.#agent.destroy();
  }
}

/** Why a request was given up by us rather than failed by the network. */
type GaveUp = 'deadline' | 'caller' | null;

/** Where a request was when it failed, as its error says. */
type Phase = 'waiting for a free connection' | 'before the status line' | 'while reading the body';

/** What a taken waiter's place in the line holds, so the line keeps no request alive. */
const taken = (): void => {};

/** The body was longer than the cap: the rest is not downloaded (the connection is closed). */
class BodyCutOff extends Error {}

/**
 * One request driven through undici's `dispatch` (not `request`, which wraps each response in a stream and an
 * abort-signal listener): the status and headers, the body kept up to `maxBytes` and the connection closed past it,
 * and a give-up (the deadline or the caller) that settles at once. undici calls `onRequestStart` only once the request
 * is on a socket; a request given up while its socket was still being opened is aborted the moment it gets one, and
 * whatever it would have answered is dropped (the agent's connect time-out bounds that wait).
 */
class CappedHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | null = null;
  #settled = false;
  #status = 0;
  #headers: GuardedResponse['headers'] = {};
  #firstByteMs = 0;
  #chunks: Buffer[] = [];
  #size = 0;
  #abortWith: Error | null = null;
  gaveUpFor: GaveUp = null;
  phase: Phase = 'before the status line';
  /** Frees the request's place among its origin's connections; called once, when undici is done with the request. */
  onDone: (() => void) | null = null;

  get settled(): boolean {
    return this.#settled;
  }

  #done(): void {
    const done = this.onDone;
    this.onDone = null;
    done?.();
  }

  readonly #maxBytes: number;
  readonly #started: number;
  readonly #resolve: (response: GuardedResponse) => void;
  readonly #reject: (err: unknown) => void;

  constructor(maxBytes: number, started: number, resolve: (response: GuardedResponse) => void, reject: (err: unknown) => void) {
    this.#maxBytes = maxBytes;
    this.#started = started;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortWith) controller.abort(this.#abortWith);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: GuardedResponse['headers']): void {
    this.#status = statusCode;
    this.#headers = headers;
    this.#firstByteMs = performance.now() - this.#started;
    this.phase = 'while reading the body';
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    if (this.#size + chunk.length > this.#maxBytes) {
      this.#chunks.push(chunk.subarray(0, this.#maxBytes - this.#size));
      this.#size = this.#maxBytes;
      this.#finish(true);
      controller.abort(new BodyCutOff('The body was cut off at its cap.'));
      return;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    this.#finish(false);
    this.#done();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    this.#done();
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(err);
  }

  /** The deadline passed or the caller cancelled: settles now with `reason`; the request is aborted where it stands. */
  giveUp(why: Exclude<GaveUp, null>, reason: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.gaveUpFor = why;
    this.#abortWith = reason instanceof Error ? reason : new Error(String(reason));
    this.#controller?.abort(this.#abortWith);
    this.#reject(reason);
  }

  #finish(truncated: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    const body = this.#chunks.length === 1 && !truncated ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#size);
    this.#resolve({
      status: this.#status,
      headers: this.#headers,
      body,
      truncated,
      timings: { firstByteMs: this.#firstByteMs, totalMs: performance.now() - this.#started },
    });
  }
}

const tlsCodePattern =
  /^(ERR_TLS_|ERR_SSL_)|CERT|CRL|SIGNATURE|ISSUER|INVALID_CA|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE|HOSTNAME_MISMATCH/;
const timeoutCodes = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

function classify(
  err: unknown,
  context: { host: string; timeoutMs: number; gaveUp: GaveUp; connections: number },
  phase: Phase,
): OutboundError {
  const { host, timeoutMs, gaveUp } = context;
  if (phase === 'waiting for a free connection' && gaveUp !== null) {
    // Our own load: every connection to the host was busy for the whole wait. The host was never asked.
    const waited = `while all ${context.connections} connections to ${host} were busy, so it was never sent`;
    return gaveUp === 'deadline'
      ? new OutboundError('timeout', `The request to ${host} waited ${timeoutMs} ms for a free connection ${waited}.`, { cause: err, neverSent: true })
      : new OutboundError('aborted', `The request to ${host} was cancelled by the caller ${waited}.`, { cause: err, neverSent: true });
  }
  const chain = causeChain(err);
  const refused = chain.find((e) => e instanceof RefusedAddressError);
  if (refused !== undefined) {
    return new OutboundError('refused_address', `Refused to connect to ${host}: ${refused.message}.`, { cause: err });
  }
  if (gaveUp === 'deadline') {
    return new OutboundError('timeout', `${host} did not answer within ${timeoutMs} ms (${phase}).`, { cause: err });
  }
  if (gaveUp === 'caller') {
    return new OutboundError('aborted', `The request to ${host} was cancelled by the caller (${phase}).`, {
      cause: err,
    });
  }
  const codes = chain.map((e) => (e as NodeJS.ErrnoException).code).filter((c): c is string => typeof c === 'string');
  const detail = chain.map((e) => e.message).find((m) => m !== '') ?? 'unknown error';
  if (codes.some((c) => timeoutCodes.has(c))) {
    return new OutboundError('timeout', `${host} did not answer in time (${phase}): ${trimPeriod(detail)}.`, {
      cause: err,
    });
  }
  if (codes.some((c) => tlsCodePattern.test(c))) {
    // OpenSSL errors carry a short `reason` ("wrong version number") next to a message full of source locations.
    const openssl = chain.map((e) => (e as { reason?: unknown }).reason).find((r) => typeof r === 'string');
    const tlsDetail = typeof openssl === 'string' ? openssl : detail;
    return new OutboundError('tls', `The TLS connection to ${host} failed: ${trimPeriod(tlsDetail)}.`, { cause: err });
  }
  return new OutboundError('connection', `The connection to ${host} failed ${phase}: ${trimPeriod(detail)}.`, {
    cause: err,
  });
}

/** The error, its causes and, for an AggregateError (autoSelectFamily tried several addresses), its errors. */
function causeChain(err: unknown): Error[] {
  const out: Error[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 20) {
    const e = queue.shift();
    if (!(e instanceof Error) || out.includes(e)) continue;
    out.push(e);
    queue.push(e.cause);
    if (e instanceof AggregateError) queue.push(...(e.errors as unknown[]));
  }
  return out;
}

function trimPeriod(message: string): string {
  return message.replace(/\.+$/, '');
}
