/**
 * A route is declared once: method, path, who may call it, the JSON Schema of its body and its answers. The same
 * declaration mounts it on Express (with Ajv validation and the role check) and describes it in /openapi.json, so
 * the description cannot drift from what the server does.
 */
import type { Request, Response } from 'express';
import type { Principal } from '../../db/repositories/accounts.repository.ts';

export type JsonSchema = Record<string, unknown>;

/**
 * public: anyone; admin: the platform operator's ADMIN_TOKEN; member: any user of the workspace (owner, admin,
 * agent); manager: owners and admins only (integration, webhook, key and channel settings; protocol §1.7, §5.6).
 * sync-write: the workspace's secret sync key in `X-Sync-Key`; sync-read: the sync key or the read-only widget key
 * in `X-Widget-Key` (protocol §1.6, §5.7; a widget key on a sync-write route is 403).
 */
export type Access = 'public' | 'admin' | 'member' | 'manager' | 'sync-write' | 'sync-read'
  // owner: the workspace's owners only (renaming the workspace; docs/interfaces.md, "The team's side").
  | 'owner'
  // Website chat (src/channels/webchat): widget: the read-only widget key in `X-Widget-Key` only (never the sync key,
  // which must not appear in web pages), checked with the page's Origin and the rate limit by the gate below
  // /v1/webchat/ (src/channels/webchat/widget-gate.ts).
  | 'widget';

export interface RouteContext<B> {
  req: Request;
  res: Response;
  body: B;
  params: Record<string, string>;
  /** Set for member and manager routes. */
  principal: Principal;
  /** The workspace the request acts on: the principal's for member and manager routes, the key's for sync routes; empty for public and admin routes. */
  workspaceId: string;
}

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** An answer the handler streamed itself: what the audit log reads in its place (src/privacy/audited-routes.ts). */
  audited?: unknown;
}

export interface RouteDefinition<B = unknown> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI form: `/v1/users/{id}`. */
  path: string;
  summary: string;
  tag: string;
  access: Access;
  body?: JsonSchema;
  /**
   * The body as /openapi.json describes it, where that is not the JSON Schema `body` validates on mount: a form
   * (Twilio's webhooks), signed raw bytes (Meta's), or batch items the handler checks one by one (sync). Described
   * only; the handler reads and checks it.
   */
  describedBody?: { contentType: string; schema: JsonSchema; required?: boolean };
  /** Path parameters the handler checks itself, for /openapi.json; default `{type: 'string'}`, `format: uuid` for `id`. */
  params?: Record<string, JsonSchema>;
  /** Query parameters (all optional) the handler checks itself, for /openapi.json. */
  query?: Record<string, JsonSchema>;
  /**
   * `contentType`: what an answer that is not JSON is (TwiML, Prometheus text, Server-Sent Events); default JSON.
   * `alsoAs`: other types the same answer may come as (the export's CSV or JSON Lines).
   */
  responses: Record<number, { description: string; schema?: JsonSchema; contentType?: string; alsoAs?: string[] }>;
  handler: (ctx: RouteContext<B>) => Promise<RouteResult>;
}

/** Declares a route; the type parameter is the body's shape that `body` guarantees after validation. */
export function route<B = undefined>(definition: RouteDefinition<B>): RouteDefinition<unknown> {
  return definition as RouteDefinition<unknown>;
}

/** The JSON error body of every failure (docs/interfaces.md: Errors everywhere). */
export const errorSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
};

/**
 * Path parameters named `id` (`/v1/users/{id}`, `/v1/sessions/{id}`, …) are UUIDs on every route: anything else is
 * answered 404 before the handler runs, and /openapi.json says `format: uuid`.
 */
export function isIdParam(name: string): boolean {
  return name === 'id';
}
