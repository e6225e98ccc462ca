/**
 * The workspace itself and the signed-in user's own account (docs/interfaces.md, "The team's side"; docs/glossary.md):
 *
 * - `GET /v1/workspace` (every role) and `PATCH /v1/workspace` `{name?, time_zone?, webchat_idle_minutes?}` (owners
 *   only) → `{id, name, time_zone, webchat_idle_minutes}`.
 * - `PATCH /v1/account` `{email?, name?}`: the signed-in user changes their own email (the first owner's placeholder
 *   `owner@example.com`, for one) or the name colleagues and customers see.
 * - `GET /v1/channels/setup` (owners and admins): what an owner pastes into Twilio and Meta, and whether each channel
 *   can work yet and, when not, why (docs/phone.md, docs/whatsapp.md).
 */
import type { WorkspaceSettingsRepository } from '../../../db/repositories/workspace-settings.repository.ts';
import type { AccountsService } from '../../accounts/accounts-service.ts';
import { isTimeZone } from '../../channels/phone/team-hours.ts';
import { TWILIO_WEBHOOK_PREFIX } from '../../channels/phone/limits.ts';
import { WHATSAPP_WEBHOOK_PATH } from '../../channels/whatsapp/limits.ts';
import { AppError, notFound } from '../../errors.ts';
import { MAX_USER_NAME_CHARS } from '../../limits.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

/** docs/webchat.md, "When a chat ends": the default, and the bounds an owner may choose. */
export const WEBCHAT_IDLE_MINUTES = { default: 30, min: 5, max: 7 * 24 * 60 } as const;

const workspaceSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'time_zone', 'webchat_idle_minutes'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    time_zone: { type: ['string', 'null'], description: 'IANA time zone, like Europe/London; null: not chosen yet.' },
    webchat_idle_minutes: { type: 'integer', description: `A web chat with no message for this many minutes ends (default ${WEBCHAT_IDLE_MINUTES.default}).` },
    configured: {
      type: 'object',
      description: 'GET only: whether the integration (GET /v1/integration), a sync key (GET /v1/keys/sync) and the WhatsApp number (GET /v1/whatsapp) exist, so a client need not ask for what is not there (those answer 404 then).',
      properties: { integration: { type: 'boolean' }, sync_key: { type: 'boolean' }, whatsapp: { type: 'boolean' } },
    },
    user: {
      type: 'object',
      description: 'GET only: the signed-in user (a token says nothing of its user otherwise; the dashboard\'s token sign-in reads its role here).',
      properties: {
        id: { type: 'string', format: 'uuid' },
        email: { type: 'string' },
        name: { type: ['string', 'null'], description: 'Their display name; null: none given (the email\'s first word is shown).' },
        role: { enum: ['owner', 'admin', 'agent'] },
      },
    },
  },
};

export interface WorkspaceRouteDeps {
  settings: WorkspaceSettingsRepository;
  /** Names a user (PATCH /v1/account `name`), under the same rule as PATCH /v1/users/{id}. */
  accounts: Pick<AccountsService, 'renameUser'>;
  publicUrl: string;
  twilioAuthToken: string | null;
  bridgeToken: string | null;
  whatsapp: { appSecret: string | null; verifyToken: string | null };
}

/** Whether calls can reach the phone WebSocket, and if not, a sentence saying what the operator sets (docs/phone.md). */
export function phoneReadiness(deps: Pick<WorkspaceRouteDeps, 'twilioAuthToken' | 'bridgeToken' | 'publicUrl'>): { ready: boolean; reason: string | null } {
  if (!deps.twilioAuthToken && !deps.bridgeToken) {
    return {
      ready: false,
      reason: 'Calls are refused for now: the person who runs this Botlink server has to set TWILIO_AUTH_TOKEN (your Twilio auth token) or BRIDGE_TOKEN first, so that only your phone provider can connect calls.',
    };
  }
  if (!deps.publicUrl.startsWith('https://')) {
    return { ready: false, reason: `Twilio cannot reach ${deps.publicUrl}: the server needs a public https:// address (PUBLIC_URL) before calls can come in.` };
  }
  return { ready: true, reason: null };
}

export function workspaceRoutes(deps: WorkspaceRouteDeps): RouteDefinition[] {
  const { settings } = deps;
  async function current(workspaceId: string) {
    const row = await settings.find(workspaceId);
    if (!row) throw notFound('The workspace');
    return row;
  }
  return [
    route({
      method: 'get',
      path: '/v1/workspace',
      tag: 'workspace',
      summary: 'The workspace: its name, time zone, how long a quiet web chat stays open, whether the integration, a sync key and WhatsApp are set (configured), and who is asking (user).',
      access: 'member',
      responses: { 200: { description: 'The workspace.', schema: workspaceSchema } },
      async handler({ workspaceId, principal }) {
        const [row, configured] = await Promise.all([current(workspaceId), settings.configured(workspaceId)]);
        const user = { id: principal.userId, email: principal.email, name: principal.name, role: principal.role };
        return { status: 200, body: { ...row, configured, user } };
      },
    }),

    route<{ name?: string; time_zone?: string | null; webchat_idle_minutes?: number }>({
      method: 'patch',
      path: '/v1/workspace',
      tag: 'workspace',
      summary: 'Rename the workspace, set its time zone, or how many quiet minutes end a web chat. Owners only.',
      access: 'owner',
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          name: { type: 'string', maxLength: 200, description: 'At most 200 characters, not only spaces.' },
          time_zone: { type: ['string', 'null'], maxLength: 64, description: 'IANA time zone, like Europe/London.' },
          webchat_idle_minutes: { type: 'integer', description: `${WEBCHAT_IDLE_MINUTES.min} to ${WEBCHAT_IDLE_MINUTES.max} minutes.` },
        },
      },
      responses: { 200: { description: 'Saved; the workspace as stored.', schema: workspaceSchema } },
      async handler({ body, workspaceId }) {
        const problems: { field: string; message: string }[] = [];
        const change: { name?: string; time_zone?: string | null; webchat_idle_minutes?: number } = {};
        if (body.name !== undefined) {
          const name = body.name.trim();
          if (!name) problems.push({ field: 'name', message: 'Enter a name for the workspace.' });
          else change.name = name;
        }
        if (body.time_zone !== undefined) {
          const zone = body.time_zone?.trim() || null;
          if (zone && !isTimeZone(zone)) problems.push({ field: 'time_zone', message: 'Choose a time zone from the list, like Europe/London.' });
          else change.time_zone = zone;
        }
        if (body.webchat_idle_minutes !== undefined) {
          const m = body.webchat_idle_minutes;
          if (m < WEBCHAT_IDLE_MINUTES.min || m > WEBCHAT_IDLE_MINUTES.max) {
            problems.push({ field: 'webchat_idle_minutes', message: `Choose between ${WEBCHAT_IDLE_MINUTES.min} minutes and ${WEBCHAT_IDLE_MINUTES.max / 60 / 24} days.` });
          } else change.webchat_idle_minutes = m;
        }
        if (problems.length) throw new AppError('validation_failed', problems[0]!.message, problems);
        const row = await settings.update(workspaceId, change);
        if (!row) throw notFound('The workspace');
        return { status: 200, body: row };
      },
    }),

    route<{ email?: string; name?: string | null }>({
      method: 'patch',
      path: '/v1/account',
      tag: 'workspace',
      summary: "Change the signed-in user's own email (the one they sign in with), or their name (what colleagues and customers see; empty or null removes it).",
      access: 'member',
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          email: { type: 'string', maxLength: 254 },
          name: { type: ['string', 'null'], maxLength: MAX_USER_NAME_CHARS, description: `At most ${MAX_USER_NAME_CHARS} characters, trimmed.` },
        },
      },
      responses: {
        200: { description: 'Changed; your email and name as stored.', schema: { type: 'object', properties: { email: { type: 'string' }, name: { type: ['string', 'null'] } } } },
        409: { description: 'Another user of the workspace has this email.' },
      },
      async handler({ body, principal }) {
        let email = principal.email;
        let name = principal.name;
        // The name first: a name too long changes nothing, the email included.
        if (body.name !== undefined) name = (await deps.accounts.renameUser(principal, principal.userId, body.name)).name;
        if (body.email !== undefined) {
          email = body.email.trim();
          if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) {
            throw new AppError('validation_failed', 'Enter an email address, like you@yourshop.example.', [{ field: 'email', message: 'Enter an email address, like you@yourshop.example.' }]);
          }
          const outcome = await settings.setUserEmail(principal.workspaceId, principal.userId, email);
          if (outcome === 'taken') {
            throw new AppError('conflict', 'Another user of this workspace already signs in with this email.', [{ field: 'email', message: 'Another user of this workspace already signs in with this email.' }]);
          }
          if (outcome === 'missing') throw notFound('Your user');
        }
        return { status: 200, body: { email, name } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/channels/setup',
      tag: 'workspace',
      summary: "What to paste into Twilio and Meta, and whether calls and WhatsApp messages can come in yet (and why not). The WhatsApp verify token is the operator's setting; owners and admins see it.",
      access: 'manager',
      responses: {
        200: {
          description: 'The values and their state.',
          schema: {
            type: 'object',
            required: ['public_url', 'public_url_is_https', 'phone', 'whatsapp', 'widget'],
            properties: {
              public_url: { type: 'string' },
              public_url_is_https: { type: 'boolean' },
              phone: { type: 'object', required: ['voice_url', 'ready', 'reason'], properties: { voice_url: { type: 'string' }, ready: { type: 'boolean' }, reason: { type: ['string', 'null'] } } },
              whatsapp: {
                type: 'object',
                required: ['callback_url', 'verify_token', 'ready', 'reason'],
                properties: { callback_url: { type: 'string' }, verify_token: { type: ['string', 'null'] }, ready: { type: 'boolean' }, reason: { type: ['string', 'null'] } },
              },
              widget: { type: 'object', required: ['script_url'], properties: { script_url: { type: 'string' } } },
            },
          },
        },
      },
      async handler() {
        const https = deps.publicUrl.startsWith('https://');
        const wa = deps.whatsapp;
        const waReason = !https
          ? `Meta needs a public https:// address to send messages to; this server's address is ${deps.publicUrl}. The person who runs it sets PUBLIC_URL.`
          : !wa.verifyToken || !wa.appSecret
            ? 'WhatsApp messages cannot come in yet: the person who runs this Botlink server has to set WHATSAPP_VERIFY_TOKEN and WHATSAPP_APP_SECRET (from your Meta app) first.'
            : null;
        return {
          status: 200,
          body: {
            public_url: deps.publicUrl,
            public_url_is_https: https,
            phone: { voice_url: `${deps.publicUrl}${TWILIO_WEBHOOK_PREFIX}/voice`, ...phoneReadiness(deps) },
            whatsapp: { callback_url: `${deps.publicUrl}${WHATSAPP_WEBHOOK_PATH}`, verify_token: wa.verifyToken, ready: waReason === null, reason: waReason },
            widget: { script_url: `${deps.publicUrl}/widget.js` },
          },
        };
      },
    }),
  ];
}
