/**
 * The gate in front of the widget's routes (everything below /v1/webchat/): CORS, the widget key, the workspace's
 * allowed origins and the visitor's budget, in that order, before the body is validated, so every answer the
 * widget may read (400, 404, 429 included) carries the CORS headers.
 *
 * CORS (docs/webchat.md):
 * - A preflight (OPTIONS) carries no X-Widget-Key, so it cannot know the workspace. It is answered permissively for
 *   the methods and headers the widget uses, and the origin is enforced on the actual request instead. That is safe:
 *   a preflight grants nothing by itself, it only lets the browser send the actual request, and that request is
 *   refused (403, before any work) unless its Origin is one the key's workspace allowed; the refusal carries no
 *   Access-Control-Allow-Origin, so the page cannot even read it.
 * - An allowed origin is echoed in Access-Control-Allow-Origin (never `*`); no credentials are involved, the key is a
 *   header and we set no cookies. A request without Origin is refused too (403): the widget is a web page's, and a
 *   browser always sends Origin on these requests, except on a GET to its own origin (the long poll from the demo page,
 *   which this service serves): that one says `Sec-Fetch-Site: same-origin`, and counts as the service's own origin.
 * - The origin list is not a secret boundary (the widget key is public by design, and a script can send any Origin it
 *   likes): it keeps other web sites from embedding a workspace's widget key in their pages. What keeps one client from
 *   spending everyone's budget is the budget itself: per visitor, not per shop (docs/webchat.md, "Rate limit"). Every
 *   request takes one from its client address's bucket (per workspace); a request about a conversation also needs room
 *   in that conversation's bucket, and takes from it only when it was answered (not 4xx), so a caller's 404s (a made-up
 *   or foreign conversation) cost that caller only.
 */
import type { NextFunction, Request, Response } from 'express';
import { Counter } from 'prom-client';
import type { Admission } from '../../admission/admission.ts';
import { SHED_RETRY_AFTER_SECONDS } from '../../admission/limits.ts';
import type { RateLimiter } from '../../rate-limiter.ts';
import { WIDGET_KEY_HEADER } from '../../auth/api-keys.ts';
import { AppError } from '../../errors.ts';
import type { Metrics } from '../../metrics.ts';
import { PREFLIGHT_MAX_AGE_SECONDS, MAX_ORIGIN_CHARS } from './limits.ts';
import { canonicalOrigin } from './origins.ts';

/** The visitor's own token to a conversation: its reads and writes after the start (docs/webchat.md, "The visitor token"). */
export const VISITOR_TOKEN_HEADER = 'X-Visitor-Token';

/** Where the gate is mounted; the widget's routes live below it, the settings (bearer token) at it. */
export const WEBCHAT_PATH = '/v1/webchat';

/** The request headers a widget may send (Accept-Language is listed for widgets that set it themselves). */
const ALLOWED_HEADERS = ['Content-Type', WIDGET_KEY_HEADER, VISITOR_TOKEN_HEADER, 'X-Request-Id', 'Accept-Language'].join(', ');
/** Response headers the widget's script may read: when to retry after 429, and the id to quote to support. */
const EXPOSED_HEADERS = 'Retry-After, X-Request-Id';

export interface WidgetGateDeps {
  apiKeys: { workspaceForWidgetKey(key: string): Promise<string | undefined> };
  /** The workspace's canonical allowed origins and the owner's switch (docs/webchat.md, "Settings on the dashboard"), in one read. */
  access(workspaceId: string): Promise<{ origins: readonly string[]; enabled: boolean }>;
  limiter: RateLimiter;
  /** Admission control (src/admission): beyond the engine's bound a message is answered 503 with Retry-After. */
  admission?: Pick<Admission, 'admitWebchat'>;
  metrics?: Pick<Metrics, 'registry'>;
}

export function createWidgetGate(deps: WidgetGateDeps) {
  /** The workspace each admitted request acts on; read by the `widget` access rule (src/http/app.ts). */
  const admitted = new WeakMap<Request, string>();
  const refused = deps.metrics
    ? new Counter({ name: 'webchat_requests_refused_total', help: 'Website-chat requests refused by the gate before any work, by reason.', labelNames: ['reason'] as const, registers: [deps.metrics.registry] })
    : null;

  function preflight(req: Request, res: Response): void {
    const origin = req.get('origin');
    res.vary('Origin');
    if (origin !== undefined) res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST');
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
    res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
    res.status(204).end();
  }

  async function admit(req: Request, res: Response): Promise<string> {
    // The answer depends on Origin whatever it is, so caches must key on it.
    res.vary('Origin');
    const key = req.get(WIDGET_KEY_HEADER);
    if (key === undefined) {
      throw new AppError(
        'unauthorized',
        req.get('x-sync-key') !== undefined
          ? `Website chat takes the widget key in ${WIDGET_KEY_HEADER}, never the secret sync key (it would be visible in the web page).`
          : `The widget key is required: ${WIDGET_KEY_HEADER}: <key> (GET /v1/keys/widget in the dashboard).`,
      );
    }
    const workspaceId = await deps.apiKeys.workspaceForWidgetKey(key.trim());
    if (!workspaceId) throw new AppError('unauthorized', `The widget key in ${WIDGET_KEY_HEADER} is unknown.`);

    const settings = await deps.access(workspaceId);
    const origin = req.get('origin') ?? sameOrigin(req);
    if (origin === undefined) {
      refused?.inc({ reason: 'origin' });
      throw new AppError('forbidden', "Website chat answers web pages only: the request needs the Origin of a page the workspace allowed (the dashboard's Channels screen, Website chat).");
    }
    const canonical = canonicalOrigin(origin);
    if (canonical === undefined || !settings.origins.includes(canonical)) {
      refused?.inc({ reason: 'origin' });
      throw new AppError('forbidden', `The origin ${origin.slice(0, MAX_ORIGIN_CHARS)} may not use this widget key; an owner or admin adds it on the dashboard's Channels screen (Website chat).`);
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    // Switched off by the owner: nothing new is sent (the widget's writes are POSTs; another method stays the router's
    // 405). Said to the page with CORS headers, so the widget can read it, before any work.
    if (req.method === 'POST' && !settings.enabled) {
      refused?.inc({ reason: 'switched_off' });
      throw new AppError('forbidden', 'The chat is switched off.', { reason: 'switched_off' });
    }

    const conversation = conversationOf(req);
    const conversationKey = conversation === undefined ? undefined : `conversation\n${workspaceId}\n${conversation}`;
    const decision = deps.limiter.take(`address\n${workspaceId}\n${req.ip ?? ''}`);
    const forConversation = decision.allowed && conversationKey !== undefined ? deps.limiter.peek(conversationKey) : decision;
    const refusal = !decision.allowed ? decision : !forConversation.allowed ? forConversation : undefined;
    if (refusal && !refusal.allowed) {
      refused?.inc({ reason: 'rate_limited' });
      res.setHeader('Retry-After', String(refusal.retryAfterSeconds));
      throw new AppError('rate_limited', `Too many requests; try again in ${refusal.retryAfterSeconds} s.`, { retry_after_seconds: refusal.retryAfterSeconds });
    }
    // The conversation pays for what was answered only: a caller's 404s and refusals are theirs alone.
    if (conversationKey !== undefined) {
      res.on('finish', () => {
        if (res.statusCode < 400) deps.limiter.take(conversationKey);
      });
    }
    // Last, so that only requests that would run get counted: beyond the engine's bound, the widget tries again later.
    // Only what runs a turn (a new conversation, a message) is turned away; contact details and the call for the team
    // are a cheap write each and always get through.
    if (deps.admission && runsTurn(req) && !deps.admission.admitWebchat()) {
      refused?.inc({ reason: 'overloaded' });
      res.setHeader('Retry-After', String(SHED_RETRY_AFTER_SECONDS));
      throw new AppError('unavailable', `The service is very busy right now; try again in ${SHED_RETRY_AFTER_SECONDS} s.`, { retry_after_seconds: SHED_RETRY_AFTER_SECONDS });
    }
    return workspaceId;
  }

  return {
    /** Express middleware for WEBCHAT_PATH; the settings at WEBCHAT_PATH itself pass through untouched. */
    async middleware(req: Request, res: Response, next: NextFunction): Promise<void> {
      if (req.path === '/' || req.path === '') return next();
      if (req.method === 'OPTIONS') return preflight(req, res);
      admitted.set(req, await admit(req, res));
      next();
    },

    /** The workspace of an admitted widget request; a `widget` route outside WEBCHAT_PATH is a wiring mistake. */
    workspaceOf(req: Request): string {
      const workspaceId = admitted.get(req);
      if (workspaceId === undefined) throw new AppError('internal', `A widget route must live below ${WEBCHAT_PATH}/.`);
      return workspaceId;
    },
  };
}

export type WidgetGate = ReturnType<typeof createWidgetGate>;

/** The conversation a widget request is about (`/conversations/{id}/…`), as the path names it. */
function conversationOf(req: Request): string | undefined {
  return /^\/conversations\/([^/]+)\//.exec(req.path)?.[1];
}

/** A web chat request that runs a turn: POST /conversations (the first message) or POST /conversations/{id}/messages. */
function runsTurn(req: Request): boolean {
  return req.method === 'POST' && /^\/conversations(?:\/[^/]+\/messages)?\/?$/.test(req.path);
}

/**
 * A browser sends no Origin on a GET to the page's own origin; it says `Sec-Fetch-Site: same-origin` instead. Such a
 * request (the widget's long poll on the demo page, served by this service) is judged as coming from this service's
 * origin, which the workspace must have allowed like any other. A script may forge either header: the origin list is
 * no secret boundary (see above), and the visitor token guards the messages.
 */
function sameOrigin(req: Request): string | undefined {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || req.get('sec-fetch-site') !== 'same-origin') return undefined;
  const host = req.get('host');
  return host ? `${req.protocol}://${host}` : undefined;
}
