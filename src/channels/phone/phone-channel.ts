/**
 * The phone channel's WebSocket endpoint, GET /v1/phone/ws (docs/interfaces.md, Channels → Phone): `ws` in noServer mode
 * on the service's own HTTP server, so the port, TLS termination and drain are shared with the API.
 *
 * Who may connect (docs/phone.md, Authentication): Twilio, with a valid `X-Twilio-Signature` over the wss:// URL
 * (when TWILIO_AUTH_TOKEN is set), or a bridge showing `Authorization: Bearer <BRIDGE_TOKEN>` (when BRIDGE_TOKEN is
 * set). Anything else is refused with HTTP 401 before a socket exists; with neither setting, every upgrade is refused
 * and the start-up log says which setting to add.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bearerToken, secretsEqual } from '../../auth/tokens.ts';
import { MAX_CLOCK_SKEW_SECONDS } from '../../limits.ts';
import type { Logger } from '../../log.ts';
import {
  PHONE_DTMF_ENTRY_MS,
  PHONE_FILLER_MS,
  PHONE_MAX_FRAME_BYTES,
  PHONE_MAX_PAYLOAD_BYTES,
  PHONE_PING_MS,
  PHONE_PING_SLICE,
  PHONE_SETUP_TIMEOUT_MS,
} from './limits.ts';
import { startPhoneCall, type PhoneCall, type PhoneCallDeps, type PhoneRuntime } from './phone-call.ts';
import type { PhoneMetrics } from './phone-metrics.ts';
import { publicRequestUrl, verifyTwilioSignature } from './twilio-signature.ts';

export const PHONE_WS_PATH = '/v1/phone/ws';
/** The query parameter our TwiML puts in the wss:// URL: when the URL was issued (Unix seconds), inside the signature. */
export const ISSUED_PARAM = 'issued';
/** How long after our `end` frame we close the socket if the bridge has not. */
const END_GRACE_MS = 1_000;

/** Tunables; every one has a default in ./limits.ts. Tests use short ones. */
export interface PhoneChannelOptions {
  /** Filler after this long without an answer; default PHONE_FILLER_MS (1.5 s). */
  fillerMs?: number;
  /** WebSocket ping interval; default PHONE_PING_MS (15 s). */
  pingMs?: number;
  /** Key entry ends after this pause; default PHONE_DTMF_ENTRY_MS (2 s). */
  dtmfEntryMs?: number;
  /** A socket without a setup frame this long is closed; default PHONE_SETUP_TIMEOUT_MS (10 s). */
  setupTimeoutMs?: number;
  /** Frames above this are dropped; default PHONE_MAX_FRAME_BYTES (64 KB). */
  maxFrameBytes?: number;
  /** Frames above this close the socket (ws maxPayload, 1009); default PHONE_MAX_PAYLOAD_BYTES (256 KB). */
  maxPayloadBytes?: number;
  /** The clock for the freshness of the `issued` URL parameter, ms; default Date.now. */
  now?: () => number;
}

export interface PhoneChannelDeps {
  runtime: PhoneRuntime;
  /** Admission control (src/admission): calls beyond the engine's bound hear the busy sentence. */
  admission?: PhoneCallDeps['admission'];
  workspaceForNumber: (number: string) => Promise<string | undefined>;
  /** See PhoneCallDeps.prepareCall: the tools manifest is prefetched when a call is set up. */
  prepareCall?: (workspaceId: string) => void;
  metrics: PhoneMetrics;
  logger: Logger;
  auth: { twilioAuthToken: string | null; bridgeToken: string | null; publicUrl: string };
  options?: PhoneChannelOptions;
}

export interface PhoneChannel {
  /**
   * The HTTP server's `upgrade` listener: takes requests for PHONE_WS_PATH and answers true; leaves any other path to
   * other listeners (false), or answers 404 when there are none.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): boolean;
  /** Listens for upgrades on the service's HTTP server. */
  attach(server: Server): void;
  /** Open calls now. */
  callCount(): number;
  /**
   * SIGTERM: refuse new calls (503), let every running turn finish and be spoken (up to `graceMs`), then hand each
   * call back to the bridge (end frame with reason 'reconnect', close 1001).
   */
  stop(graceMs: number): Promise<void>;
}

export function createPhoneChannel(deps: PhoneChannelDeps): PhoneChannel {
  const o = deps.options ?? {};
  const now = o.now ?? Date.now;
  const { twilioAuthToken, bridgeToken, publicUrl } = deps.auth;
  const log = deps.logger.child({ channel: 'phone' });
  const calls = new Set<PhoneCall>();
  let accepting = true;
  let attachedTo: Server | null = null;

  if (!twilioAuthToken && !bridgeToken) {
    // A normal state (most shops start with the website chat), said once at info: no warning a shop owner cannot judge.
    log.info('phone calls are off until TWILIO_AUTH_TOKEN (Twilio) or BRIDGE_TOKEN (another bridge) is set; the website chat and WhatsApp do not need them');
  }

  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    maxPayload: o.maxPayloadBytes ?? PHONE_MAX_PAYLOAD_BYTES,
    // ConversationRelay frames are small JSON; compression would cost CPU and memory per call for nothing.
    perMessageDeflate: false,
  });

  const callDeps: PhoneCallDeps = {
    runtime: deps.runtime,
    ...(deps.admission ? { admission: deps.admission } : {}),
    workspaceForNumber: deps.workspaceForNumber,
    ...(deps.prepareCall ? { prepareCall: deps.prepareCall } : {}),
    metrics: deps.metrics,
    logger: log,
    fillerMs: o.fillerMs ?? PHONE_FILLER_MS,
    dtmfEntryMs: o.dtmfEntryMs ?? PHONE_DTMF_ENTRY_MS,
    maxFrameBytes: o.maxFrameBytes ?? PHONE_MAX_FRAME_BYTES,
    setupTimeoutMs: o.setupTimeoutMs ?? PHONE_SETUP_TIMEOUT_MS,
    endGraceMs: END_GRACE_MS,
  };

  // One timer for every call: a call that has not answered the last ping (nor sent anything) is gone.
  const sockets = new Map<PhoneCall, WebSocket>();
  // The pings go out in slices with the event loop served between them: 1,000 pings in one go held the loop for
  // about 20 ms (measured in the phone benchmark), a stall every call's turn in flight would have waited through.
  const heartbeat = setInterval(() => pingSlice([...sockets], 0), o.pingMs ?? PHONE_PING_MS);
  function pingSlice(all: [PhoneCall, WebSocket][], from: number): void {
    const end = Math.min(all.length, from + PHONE_PING_SLICE);
    for (let i = from; i < end; i++) {
      const [call, ws] = all[i]!;
      if (!sockets.has(call)) continue; // closed meanwhile
      if (!call.alive) {
        log.warn('phone socket missed its heartbeat; terminating');
        ws.terminate();
        continue;
      }
      call.alive = false;
      ws.ping();
    }
    if (end < all.length) setImmediate(pingSlice, all, end);
  }
  heartbeat.unref();

  type Verdict = { ok: true; by: 'twilio' | 'bridge' } | { ok: false; reason: 'unauthorized' | 'not_configured' | 'stale_url' };

  function authorise(req: IncomingMessage): Verdict {
    if (!twilioAuthToken && !bridgeToken) return { ok: false, reason: 'not_configured' };
    const path = req.url ?? '';
    const signature = req.headers['x-twilio-signature'];
    if (twilioAuthToken && signature !== undefined) {
      if (verifyTwilioSignature(twilioAuthToken, signature, publicRequestUrl(publicUrl, path, 'ws'))) {
        // A signature covers the URL only, so it could be replayed; our TwiML dates the URL, and an old one is refused.
        const issued = new URL(path, 'ws://x').searchParams.get(ISSUED_PARAM);
        if (issued !== null && !(Math.abs(now() / 1000 - Number(issued)) <= MAX_CLOCK_SKEW_SECONDS)) return { ok: false, reason: 'stale_url' };
        return { ok: true, by: 'twilio' };
      }
    }
    if (bridgeToken) {
      const token = bearerToken(req.headers.authorization);
      if (token !== null && secretsEqual(token, bridgeToken)) return { ok: true, by: 'bridge' };
    }
    return { ok: false, reason: 'unauthorized' };
  }

  function refuse(socket: Duplex, status: 401 | 404 | 503, text: string): void {
    // end() writes the answer and then closes: no socket, no WebSocket (refused with HTTP 401, no socket).
    socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  }

  const channel: PhoneChannel = {
    handleUpgrade(req, socket, head) {
      const path = (req.url ?? '').split('?', 1)[0];
      if (path !== PHONE_WS_PATH) {
        socket.on('error', () => {});
        // Another channel may listen for its own path; when nobody else does, say so instead of hanging.
        if ((attachedTo?.listenerCount('upgrade') ?? 1) <= 1) refuse(socket, 404, 'Not Found');
        return false;
      }
      socket.on('error', (err) => log.debug({ err }, 'phone upgrade socket error'));
      if (!accepting) {
        deps.metrics.upgradesRefused.inc({ reason: 'draining' });
        refuse(socket, 503, 'Service Unavailable');
        return true;
      }
      const verdict = authorise(req);
      if (!verdict.ok) {
        deps.metrics.upgradesRefused.inc({ reason: verdict.reason });
        log.warn({ reason: verdict.reason }, verdict.reason === 'not_configured' ? 'phone upgrade refused: set TWILIO_AUTH_TOKEN or BRIDGE_TOKEN' : 'phone upgrade refused');
        refuse(socket, 401, 'Unauthorized');
        return true;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const call = startPhoneCall(ws, callDeps);
        calls.add(call);
        sockets.set(call, ws);
        void call.finished.then(() => {
          calls.delete(call);
          sockets.delete(call);
        });
        log.debug({ by: verdict.by }, 'phone socket open');
      });
      return true;
    },

    attach(server) {
      attachedTo = server;
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => channel.handleUpgrade(req, socket, head));
    },

    callCount: () => calls.size,

    async stop(graceMs) {
      accepting = false;
      clearInterval(heartbeat);
      const deadline = performance.now() + graceMs;
      // Turns may start while others finish (a caller speaks again): wait until none runs, or the grace is over.
      while ([...calls].some((c) => c.busy()) && performance.now() < deadline) {
        const left = deadline - performance.now();
        await Promise.race([Promise.allSettled([...calls].map((c) => c.idle())), new Promise((r) => setTimeout(r, left).unref())]);
      }
      for (const call of calls) call.handBack();
      const closing = Promise.allSettled([...calls].map((c) => c.finished));
      const timeout = new Promise<false>((r) => setTimeout(r, END_GRACE_MS, false).unref());
      if ((await Promise.race([closing.then(() => true), timeout])) === false) for (const ws of sockets.values()) ws.terminate();
      await closing;
      wss.close();
    },
  };
  return channel;
}
