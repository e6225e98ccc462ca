/**
 * The Express application: request ids and logs, metrics, JSON bodies with a size limit, the declared routes with
 * their access rules and validation, a JSON 404 for anything else and one error handler that turns every failure
 * into `{"error":{"code","message","details"}}` with its status.
 */
import { randomUUID } from 'node:crypto';
import { parse as parseQueryString } from 'node:querystring';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import { bearerToken, secretsEqual } from '../auth/tokens.ts';
import { AppError, forbidden } from '../errors.ts';
import { MAX_API_BODY_BYTES } from '../limits.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { cleanJson, cleanText } from '../text/outside-text.ts';
import { isIdParam, type RouteDefinition } from './route.ts';
import { compileBodyValidator, compileParamsMatcher, compileQueryValidator } from './validation.ts';
// Phone (src/channels/phone).
import { TWILIO_MAX_FORM_BYTES, TWILIO_WEBHOOK_PREFIX } from '../channels/phone/limits.ts';
// WhatsApp (src/channels/whatsapp).
import { WHATSAPP_MAX_WEBHOOK_BYTES, WHATSAPP_WEBHOOK_PATH } from '../channels/whatsapp/limits.ts';
import { isUuid } from '../ids.ts';
// The audit log (src/privacy): audited calls are recorded after they succeed.
import type { Audit } from '../privacy/audit.ts';
import { auditRecordOf, auditRuleOf, recordFailedSignIn } from '../privacy/audited-routes.ts';

export interface AppDeps {
  routes: readonly RouteDefinition[];
  accounts: AccountsService;
  metrics: Metrics;
  logger: Logger;
  adminToken: string | null;
  /** Resolves the sync API's keys (sync-write and sync-read routes); absent: those routes answer 503. */
  apiKeys?: ApiKeyResolver;
  /** Website chat: the gate of the `widget` routes (CORS, widget key, origin, rate limit); absent: they answer 503. */
  widget?: WidgetAccess;
  /**
   * Pages and their static files for people (the dashboard, the chat widget's script and demo page): not API
   * operations, so not in /openapi.json; mounted after the API routes, each router sets its own headers (CSP).
   */
  pages?: readonly express.Router[];
  /** The audit log (docs/privacy.md); absent: nothing is recorded. */
  audit?: Audit;
  /**
   * TRUST_PROXY (src/config.ts): the load balancers whose `X-Forwarded-For` names the client; empty or absent: the
   * peer is the client and the header is ignored.
   */
  trustProxy?: readonly string[];
}

/** What the HTTP layer needs of the sync and widget keys (src/auth/api-keys.ts). */
export interface ApiKeyResolver {
  workspaceForSyncKey(key: string): Promise<string | undefined>;
  workspaceForWidgetKey(key: string): Promise<string | undefined>;
}

/**
 * Website chat (src/channels/webchat/widget-gate.ts): `middleware` is mounted at `path` ahead of body parsing, so its
 * CORS headers reach every answer a widget may read, and preflights are answered there; `workspaceOf` gives the
 * `widget` access rule the workspace the gate admitted the request for.
 */
export interface WidgetAccess {
  path: string;
  middleware: (req: Request, res: Response, next: NextFunction) => Promise<void>;
  workspaceOf(req: Request): string;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // `req.ip` keys the per-address limits (sign-in, web chat) and the audit log: behind a load balancer it must be the
  // client's, not the balancer's, and never what an untrusted peer claims (docs/operations.md, "Behind a load balancer").
  app.set('trust proxy', deps.trustProxy && deps.trustProxy.length > 0 ? [...deps.trustProxy] : false);
  // Outside text (src/text/outside-text.ts): query strings are cleaned where they are parsed.
  app.set('query parser', (query: string) => cleanJson({ ...parseQueryString(query) }));

  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId(req, res) {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('x-request-id', id);
        return id;
      },
      // Path only: query strings may carry tokens (WhatsApp's hub.verify_token).
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      },
      // Each request at debug (a dashboard that is open polls and streams: hundreds of lines an hour at info buried the
      // start-up message); failures of ours at error. Counts per route and status are in /metrics.
      customLogLevel: (_req, res, err) => (err || (res.statusCode >= 500 && !shed(res.statusCode, res)) ? 'error' : 'debug'),
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/metrics' },
    }),
  );

  // Website chat: the widget gate runs before the body is read (see WidgetAccess).
  if (deps.widget) app.use(deps.widget.path, deps.widget.middleware);

  // WhatsApp: Meta signs the raw bytes (and escapes non-ASCII as \uXXXX), so its webhook gets them unparsed; they are
  // read (not parsed) before the signature check, which needs them (docs/whatsapp.md).
  app.use(WHATSAPP_WEBHOOK_PATH, express.raw({ type: () => true, limit: WHATSAPP_MAX_WEBHOOK_BYTES }));

  // Phone (src/channels/phone): Twilio posts its voice and action webhooks form-encoded and signs the parameters, so
  // they are parsed before the signature check; small (TWILIO_MAX_FORM_BYTES) and flat.
  app.use(TWILIO_WEBHOOK_PREFIX, express.urlencoded({ extended: false, limit: TWILIO_MAX_FORM_BYTES, parameterLimit: 200 }));

  // Every other body is JSON, read and parsed per route only after the caller is authenticated (mount below), so an
  // unauthenticated flood of large bodies costs no parsing (docs/reliability.md).
  const json = express.json({ limit: MAX_API_BODY_BYTES, strict: true, type: ['application/json', 'application/*+json'] });

  const router = express.Router();
  for (const definition of deps.routes) mount(router, definition, deps, json);
  app.use(router);
  for (const pages of deps.pages ?? []) app.use(pages);

  const allowed = allowedMethods(deps.routes);
  app.use((req: Request, res: Response) => {
    const { methods, notAnId } = allowed(req.path);
    if (methods.length > 0) {
      res.setHeader('Allow', methods.join(', '));
      throw new AppError('method_not_allowed', `${req.method} is not supported on ${req.path.slice(0, 200)}; use ${methods.join(', ')}.`);
    }
    if (notAnId) throw new AppError('not_found', `No ${notAnId.name} ${cleanText(notAnId.value.slice(0, 64))} here: ids are UUIDs.`);
    throw new AppError('not_found', `No route ${req.method} ${req.path.slice(0, 200)}.`);
  });
  app.use(errorHandler(deps.logger));
  return app;
}

function mount(router: express.Router, definition: RouteDefinition, deps: AppDeps, json: RequestHandler): void {
  const expressPath = definition.path.replace(/\{([^}]+)\}/g, ':$1');
  const bodyOptional = definition.body !== undefined && !Array.isArray(definition.body.required);
  const validate = definition.body ? compileBodyValidator(definition.body) : null;
  const paramsMatch = compileParamsMatcher(definition.params);
  // The operator's and the dashboard's routes; Meta's verify handshake keeps its own answers (403, as Meta expects).
  const validateQuery = definition.query && definition.access !== 'public' ? compileQueryValidator(definition.query) : null;
  const metricRoute = definition.path;
  const auditRule = deps.audit ? auditRuleOf(definition.method, definition.path) : undefined;

  router[definition.method](expressPath, async (req: Request, res: Response, next: NextFunction) => {
    const params = cleanJson({ ...req.params } as Record<string, string>);
    // A declared parameter that does not match (PUT /v1/webhooks/test is not PUT /v1/webhooks/{event}): not this route.
    if (!paramsMatch(params)) return next();

    // Every API answer: no cache may keep it. Several carry a secret shown once (tokens, invite links, the sync and
    // integration keys, webhook secrets), the others a workspace's data (docs/reliability.md).
    res.setHeader('Cache-Control', 'no-store');
    const stop = deps.metrics.httpDuration.startTimer({ method: definition.method.toUpperCase(), route: metricRoute });
    res.on('finish', () => stop({ status: String(res.statusCode) }));

    // An id that is not an id names nothing: not this route (and never a uuid column). A path of its own may be
    // there (POST /v1/knowledge/entries/from-conversation beside /v1/knowledge/entries/{id}); else the 404 below.
    for (const [name, value] of Object.entries(params)) {
      if (isIdParam(name) && !isUuid(value)) return next();
    }

    const { principal, workspaceId } = await authorise(definition, req, deps);
    validateQuery?.(req.query as Record<string, unknown>);
    // A multipart upload (a knowledge file) is streamed by its handler, within its own limit.
    if (!definition.describedBody?.contentType.startsWith('multipart/')) await readBody(req, res, json);
    const raw = req.body === undefined && bodyOptional ? {} : req.body;
    const body = validate ? validate(raw) : undefined;
    const call = { params, body, answer: undefined as unknown, principal, workspaceId, ip: req.ip ?? null };
    let result;
    try {
      result = await definition.handler({ req, res, body, params, principal: principal as Principal, workspaceId });
    } catch (err) {
      if (deps.audit) await recordFailedSignIn(deps.audit, definition.method, definition.path, call, err);
      throw err;
    }
    if (auditRule && deps.audit && result.status < 400) {
      const entry = auditRecordOf(auditRule, { ...call, answer: result.body ?? result.audited });
      if (entry) await deps.audit.recordQuietly(entry);
    }
    if (res.headersSent) return;
    res.status(result.status);
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    if (result.body === undefined) res.end();
    else if (typeof result.body === 'string') res.send(result.body);
    else res.json(result.body);
  });
}

/**
 * Reads and parses the body after authentication: JSON for every route, except the bodies read before (WhatsApp's raw
 * bytes, Twilio's form). A body that is present but not JSON is refused (415) instead of being silently ignored.
 * Outside text is cleaned here, once for every route (src/text/outside-text.ts).
 */
async function readBody(req: Request, res: Response, json: RequestHandler): Promise<void> {
  if (req.body === undefined) {
    await new Promise<void>((resolve, reject) => {
      void json(req, res, (err?: unknown) => (err ? reject(err as Error) : resolve()));
    });
  }
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && req.body === undefined && !['GET', 'HEAD', 'DELETE'].includes(req.method)) {
    throw new AppError('unsupported_media_type', 'The body must be JSON (Content-Type: application/json).');
  }
  if (req.body !== undefined && !Buffer.isBuffer(req.body)) req.body = cleanJson(req.body as unknown);
}

/**
 * The methods each declared path answers, for the 405 of an unsupported method (with HEAD wherever GET is); a path
 * whose `id` is no UUID names no route, and `notAnId` says which id it was when that is all that failed.
 */
function allowedMethods(routes: readonly RouteDefinition[]): (path: string) => { methods: string[]; notAnId?: { name: string; value: string } } {
  const candidates = routes.map((r) => ({ ...pathPattern(r.path), matches: compileParamsMatcher(r.params), method: r.method.toUpperCase() }));
  return (path) => {
    const methods = new Set<string>();
    let notAnId: { name: string; value: string } | undefined;
    for (const c of candidates) {
      const found = c.pattern.exec(path);
      if (!found) continue;
      const values = Object.fromEntries(c.names.map((name, i) => [name, safeDecode(found[i + 1]!)]));
      if (!c.matches(values)) continue;
      const wrong = Object.entries(values).find(([name, value]) => isIdParam(name) && !isUuid(value));
      if (wrong) {
        notAnId ??= { name: wrong[0], value: wrong[1] };
        continue;
      }
      methods.add(c.method);
      if (c.method === 'GET') methods.add('HEAD');
    }
    return { methods: [...methods].sort(), ...(notAnId ? { notAnId } : {}) };
  };
}

function pathPattern(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split(/(\{[^}]+\})/)
    .map((part) => {
      if (!part.startsWith('{')) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(part.slice(1, -1));
      return '([^/]+)';
    })
    .join('');
  return { pattern: new RegExp(`^${source}/?$`), names };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

async function authorise(definition: RouteDefinition, req: Request, deps: AppDeps): Promise<{ principal?: Principal; workspaceId: string }> {
  if (definition.access === 'public') return { workspaceId: '' };
  if (definition.access === 'sync-write' || definition.access === 'sync-read') return { workspaceId: await keyWorkspace(definition.access, req, deps) };
  // Website chat: the widget gate already checked the widget key, the Origin and the rate limit.
  if (definition.access === 'widget') {
    if (!deps.widget) throw new AppError('unavailable', 'Website chat is not available on this server.');
    return { workspaceId: deps.widget.workspaceOf(req) };
  }
  const token = bearerToken(req.headers.authorization);
  if (definition.access === 'admin') {
    if (!deps.adminToken) throw new AppError('unauthorized', 'The operator API is off: ADMIN_TOKEN is not set.');
    if (!token || !secretsEqual(token, deps.adminToken)) throw new AppError('unauthorized', 'A valid operator token (ADMIN_TOKEN) is required.');
    return { workspaceId: '' };
  }
  if (!token) throw new AppError('unauthorized', 'A bearer token is required: Authorization: Bearer <token>.');
  const principal = await deps.accounts.authenticate(token);
  if (!principal) throw new AppError('unauthorized', 'The bearer token is unknown or revoked.');
  if (definition.access === 'manager' && principal.role !== 'owner' && principal.role !== 'admin') throw forbidden();
  if (definition.access === 'owner' && principal.role !== 'owner') throw forbidden('Only an owner of the workspace may change this.');
  return { principal, workspaceId: principal.workspaceId };
}

/**
 * The sync API's keys (protocol §5.7): the sync key in X-Sync-Key may read and write, the widget key in X-Widget-Key may
 * only read. A wrong key is 401 whichever header carries it; a right widget key on a write is 403.
 */
async function keyWorkspace(access: 'sync-write' | 'sync-read', req: Request, deps: AppDeps): Promise<string> {
  if (!deps.apiKeys) throw new AppError('unavailable', 'The sync API is not available on this server.');
  const syncKey = req.get('x-sync-key');
  if (syncKey !== undefined) {
    const workspaceId = await deps.apiKeys.workspaceForSyncKey(syncKey.trim());
    if (!workspaceId) throw new AppError('unauthorized', 'The sync key in X-Sync-Key is unknown or was replaced by a newer one.');
    return workspaceId;
  }
  const widgetKey = req.get('x-widget-key');
  if (widgetKey !== undefined) {
    const workspaceId = await deps.apiKeys.workspaceForWidgetKey(widgetKey.trim());
    if (!workspaceId) throw new AppError('unauthorized', 'The widget key in X-Widget-Key is unknown.');
    if (access === 'sync-write') throw forbidden('The widget key can only read; writing needs the sync key in X-Sync-Key.');
    return workspaceId;
  }
  throw new AppError(
    'unauthorized',
    access === 'sync-write'
      ? 'The sync key is required: X-Sync-Key: <key> (made in the dashboard under Integrations).'
      : 'A key is required: X-Sync-Key: <sync key> or X-Widget-Key: <widget key>.',
  );
}

/**
 * A 503 with Retry-After is admission control turning work away (src/admission): not a failure of this request. The
 * shedding has its own rate-limited `warn` line; an error line per refused request would flood the log under overload.
 */
function shed(status: number, res: { hasHeader(name: string): boolean }): boolean {
  return status === 503 && res.hasHeader('retry-after');
}

function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appError = toAppError(err);
    if (appError.status >= 500 && !shed(appError.status, res)) (req.log ?? logger).error({ err }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (appError.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
    // A budget's refusal (src/rate-limiter.ts) says its wait in details; clients read it from the header too.
    const retryAfter = (appError.details as { retry_after?: unknown } | undefined)?.retry_after;
    if (appError.code === 'rate_limited' && typeof retryAfter === 'number' && !res.hasHeader('retry-after')) res.setHeader('Retry-After', String(retryAfter));
    res.status(appError.status).json(appError.toJSON());
  };
}

function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { type?: string; status?: number; message?: string } | undefined;
  // body-parser's errors carry a `type`.
  switch (e?.type) {
    case 'entity.too.large':
      return new AppError('payload_too_large', `The body is larger than ${MAX_API_BODY_BYTES} bytes.`);
    case 'entity.parse.failed':
      return new AppError('invalid_json', 'The body is not valid JSON.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', 'The body must be UTF-8 JSON.');
    case 'request.aborted':
      return new AppError('bad_request', 'The request was aborted by the client.');
  }
  if (e?.status && e.status >= 400 && e.status < 500) return new AppError('bad_request', 'The request could not be read.');
  return new AppError('internal', 'Something went wrong on our side; the request id in x-request-id helps us find it.');
}
