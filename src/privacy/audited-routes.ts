/**
 * Which API calls the audit log records, in one table keyed by `METHOD path` (docs/privacy.md, "Audit log"), so a
 * route file need not know about the audit: the app records an entry after the call succeeded, with the caller, the
 * address and a target read from the path, the body or the answer. Targets never carry a secret's value (keys,
 * tokens, passwords, webhook secrets) nor a customer's identifier.
 */
import type { Principal } from '../../db/repositories/accounts.repository.ts';
import { AppError } from '../errors.ts';
import type { Audit, AuditAction, AuditRecord } from './audit.ts';

export interface AuditedCall {
  params: Record<string, string>;
  body: unknown;
  /** The answer's body (success) or undefined. */
  answer: unknown;
  principal: Principal | undefined;
  workspaceId: string;
  ip: string | null;
}

interface Rule {
  action: AuditAction;
  target?: (call: AuditedCall) => string | null;
  /** The workspace when the route's caller has none (the operator's routes, signing in). */
  workspace?: (call: AuditedCall) => string | undefined;
  /** The acting user when the caller is not signed in yet (signing in). */
  actor?: (call: AuditedCall) => { userId: string; email: string } | null;
  /** Recorded only for these calls (a route that changes several things audits some of them). */
  only?: (call: AuditedCall) => boolean;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const read = (value: unknown, ...path: string[]): any => path.reduce<any>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value);
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const signedIn = (call: AuditedCall) => {
  const id = str(read(call.answer, 'user', 'id'));
  const email = str(read(call.answer, 'user', 'email'));
  return id && email ? { userId: id, email } : null;
};

const rules: Record<string, Rule> = {
  'POST /v1/auth/login': { action: 'sign_in', workspace: (c) => str(read(c.answer, 'workspace', 'id')) ?? undefined, actor: signedIn },
  'POST /v1/auth/password': { action: 'password_set', workspace: (c) => str(read(c.answer, 'workspace', 'id')) ?? undefined, actor: signedIn },
  'POST /v1/admin/workspaces': {
    action: 'workspace_created',
    workspace: (c) => str(read(c.answer, 'workspace', 'id')) ?? undefined,
    target: (c) => `owner ${str(read(c.answer, 'owner', 'email')) ?? ''}`,
  },
  'POST /v1/admin/workspaces/{id}/owners': { action: 'owner_restored', workspace: (c) => c.params.id, target: (c) => str(read(c.answer, 'owner', 'email')) },
  'PATCH /v1/workspace': { action: 'workspace_changed', target: (c) => Object.keys((c.body as object | undefined) ?? {}).join(', ') },
  // One's own name is no one's access: only a changed email (the one signed in with) is recorded.
  'PATCH /v1/account': { action: 'account_email_changed', target: (c) => str(read(c.body, 'email')), only: (c) => read(c.body, 'email') !== undefined },
  'PATCH /v1/users/{id}': { action: 'user_renamed', target: (c) => `user ${c.params.id}: ${str(read(c.answer, 'user', 'name')) ?? '(no name)'}` },
  'POST /v1/users': { action: 'user_invited', target: (c) => `${str(read(c.answer, 'user', 'email')) ?? ''} as ${str(read(c.answer, 'user', 'role')) ?? ''}` },
  'POST /v1/users/{id}/invite': { action: 'invite_link_made', target: (c) => `user ${c.params.id}` },
  'DELETE /v1/users/{id}': { action: 'user_removed', target: (c) => `user ${c.params.id}` },
  'POST /v1/tokens': { action: 'token_created', target: (c) => `expires ${str(read(c.answer, 'expires_at')) ?? ''}` },
  'DELETE /v1/tokens/current': { action: 'token_revoked', target: () => 'the token in use (signed out)' },
  'DELETE /v1/tokens/{id}': { action: 'token_revoked', target: (c) => `token ${c.params.id}` },
  'PUT /v1/integration': {
    action: 'integration_changed',
    target: (c) => `${str(read(c.answer, 'endpoint_url')) ?? ''}${read(c.answer, 'key') ? ' (new key)' : ''}`,
  },
  'POST /v1/integration/key': { action: 'integration_key_replaced' },
  'DELETE /v1/integration': { action: 'integration_removed' },
  'POST /v1/keys/sync': { action: 'sync_key_replaced' },
  'PUT /v1/webhooks/{event}': { action: 'webhook_endpoint_set', target: (c) => `${c.params.event} → ${str(read(c.body, 'url')) ?? ''}` },
  'POST /v1/webhooks/{event}/secret': { action: 'webhook_secret_rotated', target: (c) => c.params.event ?? null },
  'DELETE /v1/webhooks/{event}': { action: 'webhook_endpoint_removed', target: (c) => c.params.event ?? null },
  'PUT /v1/phone': { action: 'phone_settings_changed', target: (c) => ((read(c.answer, 'numbers') as unknown[] | undefined) ?? []).join(', ') },
  'PUT /v1/whatsapp': { action: 'whatsapp_settings_changed', target: (c) => `phone number id ${str(read(c.body, 'phone_number_id')) ?? ''}` },
  'DELETE /v1/whatsapp': { action: 'whatsapp_removed' },
  'PUT /v1/webchat': { action: 'webchat_settings_changed', target: (c) => JSON.stringify(c.body ?? {}).slice(0, 400) },
  'PUT /v1/team': { action: 'team_availability_changed', target: (c) => (read(c.body, 'available') ? 'available' : 'not available') },
  'PUT /v1/inbox/settings': { action: 'inbox_settings_changed', target: (c) => JSON.stringify(c.body ?? {}) },
  'POST /v1/sessions/{id}/takeover': { action: 'conversation_taken_over', target: (c) => `conversation ${c.params.id}` },
  'GET /v1/exports/conversations': { action: 'conversations_exported', target: (c) => conversationsExported(c) },
  'PUT /v1/workspace/retention': {
    action: 'retention_changed',
    target: (c) => (typeof read(c.body, 'days') === 'number' ? `${read(c.body, 'days') as number} days` : 'kept until erased'),
  },
  'POST /v1/privacy/export': { action: 'customer_exported', target: (c) => `${summary(c)}; period: everything held, format: json` },
  'POST /v1/privacy/erase': { action: 'customer_erased', target: (c) => summary(c) },
  // The question is the customer's words: the target names the entry and the conversation by id only.
  'POST /v1/knowledge/entries/from-conversation': {
    action: 'knowledge_entry_added_from_conversation',
    target: (c) => `entry ${str(read(c.answer, 'id')) ?? '?'} from conversation ${str(read(c.body, 'session_id')) ?? '?'}`,
  },
  // Customers' messages sent to a candidate endpoint: to which host, never the key nor the URL's path or query.
  'POST /v1/integration/replay': { action: 'customer_messages_replayed', target: (c) => `to ${hostOf(read(c.body, 'endpoint_url'))}, last ${String(read(c.body, 'last'))}` },
};

/** The conversations export: its period (the hours it covers, UTC), channel and format, as the route answered it. */
function conversationsExported(call: AuditedCall): string {
  const channel = str(read(call.answer, 'channel'));
  const period = `period: ${str(read(call.answer, 'from')) ?? '?'} to ${str(read(call.answer, 'to')) ?? '?'}`;
  return `${period}${channel ? `, channel: ${channel}` : ''}, format: ${str(read(call.answer, 'format')) ?? '?'}`;
}

/** A URL's host and port, without its user, password, path or query (any of which may carry a secret). */
function hostOf(url: unknown): string {
  try {
    return new URL(String(url)).host;
  } catch {
    return 'an unreadable URL';
  }
}

/** Export and erasure: by which kind of identifier, and how much; never the identifier itself. */
function summary(call: AuditedCall): string {
  const by = Object.keys((call.body as object | undefined) ?? {}).join(', ');
  // The answer's count in an owner's words (customer-tables.ts, inWords): what was found or erased, never who.
  const said = read(call.answer, 'said');
  return `by ${by}: ${typeof said === 'string' ? said : 'nothing'}`;
}

export type AuditRule = Rule;

/** The audit rule of a route, if it is audited. */
export function auditRuleOf(method: string, path: string): Rule | undefined {
  return rules[`${method.toUpperCase()} ${path}`];
}

/** Every `METHOD path` the audit records (tests check each names a mounted route or a route still to come). */
export const auditedRouteKeys: readonly string[] = Object.keys(rules);

/** The entry a successful call makes, or null when its workspace cannot be told. */
export function auditRecordOf(rule: Rule, call: AuditedCall): AuditRecord | null {
  const workspaceId = call.workspaceId || rule.workspace?.(call);
  if (!workspaceId || (rule.only && !rule.only(call))) return null;
  const actor = call.principal ? { userId: call.principal.userId, email: call.principal.email } : (rule.actor?.(call) ?? null);
  return { workspaceId, action: rule.action, target: rule.target?.(call) ?? null, actor, ip: call.ip };
}

/**
 * A sign-in refused for a wrong email or password: one entry in each workspace where the email names a user (the
 * answer does not say which workspace was meant). Other refusals (too many attempts) are the throttle's.
 */
export async function recordFailedSignIn(audit: Audit, method: string, path: string, call: AuditedCall, err: unknown): Promise<void> {
  if (`${method.toUpperCase()} ${path}` !== 'POST /v1/auth/login') return;
  if (!(err instanceof AppError) || err.code !== 'unauthorized') return;
  const email = str(read(call.body, 'email'));
  if (!email) return;
  for (const workspaceId of await audit.workspacesOfEmail(email)) {
    await audit.recordQuietly({ workspaceId, action: 'sign_in_failed', target: email.trim().toLowerCase(), actor: null, ip: call.ip });
  }
}
