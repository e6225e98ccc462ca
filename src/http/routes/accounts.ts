/** Workspaces (platform operator), users and tokens (docs/interfaces.md: Accounts and authorisation). */
import type { Role } from '../../../db/schema.ts';
import type { AccountsService } from '../../accounts/accounts-service.ts';
import { MAX_TOKEN_TTL_SECONDS, MAX_TOKENS_PER_USER, MAX_USER_NAME_CHARS, MIN_TOKEN_TTL_SECONDS } from '../../limits.ts';
import { route, type RouteDefinition } from '../route.ts';

const email = { type: 'string', format: 'email', maxLength: 254 };
const roleSchema = { type: 'string', enum: ['owner', 'admin', 'agent'] };
const inviteUrl = {
  type: 'string',
  format: 'uri',
  description: "A one-time link to set the user's password: {PUBLIC_URL}/dashboard/invite#<token>, 7 days; shown once.",
};
const nameSchema = {
  type: ['string', 'null'],
  maxLength: MAX_USER_NAME_CHARS,
  description: `The name colleagues and customers see ("Sam, from the team"): at most ${MAX_USER_NAME_CHARS} characters, trimmed; empty or null: none, and the email's first word is shown instead.`,
};
const userSchema = {
  type: 'object',
  properties: { id: { type: 'string' }, email: { type: 'string' }, name: { type: ['string', 'null'], description: 'The display name; null: none given.' }, role: roleSchema },
};

export function accountRoutes(accounts: AccountsService): RouteDefinition[] {
  return [
    route<{ name: string; owner_email: string }>({
      method: 'post',
      path: '/v1/admin/workspaces',
      tag: 'admin',
      summary: 'Create a workspace and its first owner; the owner token is in this answer only.',
      access: 'admin',
      body: {
        type: 'object',
        required: ['name', 'owner_email'],
        additionalProperties: false,
        properties: { name: { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' }, owner_email: email },
      },
      responses: {
        201: {
          description: 'Created.',
          schema: {
            type: 'object',
            properties: {
              workspace: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } },
              owner: { type: 'object', properties: { email: { type: 'string' }, token: { type: 'string' }, invite_url: inviteUrl } },
            },
          },
        },
      },
      async handler({ body }) {
        const created = await accounts.createWorkspace({ name: body.name, ownerEmail: body.owner_email });
        const { email, token, invite_url } = created.owner;
        return { status: 201, body: { workspace: created.workspace, owner: { email, token, ...(invite_url ? { invite_url } : {}) } } };
      },
    }),

    route<{ email: string }>({
      method: 'post',
      path: '/v1/admin/workspaces/{id}/owners',
      tag: 'admin',
      summary:
        'Restore an owner: the live user with this email becomes an owner, or a new owner is added; either way with a new token, in this answer only. For a workspace that lost its owners.',
      access: 'admin',
      body: { type: 'object', required: ['email'], additionalProperties: false, properties: { email } },
      responses: {
        201: {
          description: 'The owner and their new token.',
          schema: {
            type: 'object',
            required: ['owner'],
            properties: {
              owner: {
                type: 'object',
                required: ['id', 'email', 'token', 'created'],
                properties: {
                  id: { type: 'string', format: 'uuid' },
                  email: { type: 'string' },
                  token: { type: 'string' },
                  created: { type: 'boolean', description: 'false: an existing user was made owner.' },
                  invite_url: inviteUrl,
                },
              },
            },
          },
        },
        404: { description: 'No such workspace.' },
      },
      async handler({ body, params }) {
        return { status: 201, body: await accounts.restoreOwner(params.id!, body.email) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/users',
      tag: 'users',
      summary: 'List the users of the workspace.',
      access: 'manager',
      responses: {
        200: {
          description: 'The users.',
          schema: {
            type: 'object',
            properties: {
              users: {
                type: 'array',
                items: {
                  ...userSchema,
                  properties: { ...userSchema.properties, created_at: { type: 'string', format: 'date-time' }, password_set: { type: 'boolean', description: 'false: the user has not set a password through an invite link yet.' } },
                },
              },
            },
          },
        },
      },
      async handler({ principal }) {
        return { status: 200, body: { users: await accounts.listUsers(principal) } };
      },
    }),

    route<{ email: string; role: Role; name?: string | null }>({
      method: 'post',
      path: '/v1/users',
      tag: 'users',
      summary:
        "Add a user; their invite link (to set a password, then sign in) is in this answer only. No token: nobody but the user ever holds one of theirs. Owners add anyone, admins add agents (an invite link sets the password, so admins' and owners' links are made by owners).",
      access: 'manager',
      body: { type: 'object', required: ['email', 'role'], additionalProperties: false, properties: { email, role: roleSchema, name: nameSchema } },
      responses: {
        201: {
          description: 'Created.',
          schema: {
            type: 'object',
            required: ['user', 'invite_emailed'],
            properties: { user: userSchema, invite_url: inviteUrl, invite_emailed: { type: 'boolean', description: 'true: the link is also on its way to the user by email (SMTP_URL is set).' } },
          },
        },
        403: { description: 'An admin asked to add an owner or an admin.' },
        409: { description: 'A user with that email exists.' },
      },
      async handler({ body, principal }) {
        return { status: 201, body: await accounts.createUser(principal, body) };
      },
    }),

    route<{ name: string | null }>({
      method: 'patch',
      path: '/v1/users/{id}',
      tag: 'users',
      summary: "Change a user's display name (empty or null removes it). Owners change anyone's, admins agents' and their own.",
      access: 'manager',
      body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: nameSchema } },
      responses: {
        200: { description: 'The user as stored.', schema: { type: 'object', required: ['user'], properties: { user: userSchema } } },
        400: { description: 'The name is too long.' },
        403: { description: "An admin asked to change an owner's or another admin's name." },
        404: { description: 'No such user.' },
      },
      async handler({ body, params, principal }) {
        return { status: 200, body: { user: await accounts.renameUser(principal, params.id!, body.name) } };
      },
    }),

    route({
      method: 'post',
      path: '/v1/users/{id}/invite',
      tag: 'users',
      summary: 'A new one-time invite link for the user to set their password (7 days; their older unused links stop working; using it revokes every token the user held). Only owners make links for owners and admins.',
      access: 'manager',
      responses: {
        201: {
          description: 'The link, in this answer only.',
          schema: {
            type: 'object',
            required: ['invite_url', 'expires_at', 'invite_emailed'],
            properties: { invite_url: inviteUrl, expires_at: { type: 'string', format: 'date-time' }, invite_emailed: { type: 'boolean', description: 'true: the link is also on its way to the user by email.' } },
          },
        },
        403: { description: "An admin asked for an owner's or an admin's link." },
        404: { description: 'No such user.' },
      },
      async handler({ params, principal }) {
        return { status: 201, body: await accounts.inviteUser(principal, params.id!) };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/users/{id}',
      tag: 'users',
      summary: 'Remove a user and revoke all their tokens. The last owner cannot be removed.',
      access: 'manager',
      responses: { 204: { description: 'Removed.' }, 404: { description: 'No such user.' }, 409: { description: 'The last owner.' } },
      async handler({ params, principal }) {
        await accounts.revokeUser(principal, params.id!);
        return { status: 204 };
      },
    }),

    route<{ expires_in?: number }>({
      method: 'post',
      path: '/v1/tokens',
      tag: 'tokens',
      summary: `A fresh token for the caller (the current one keeps working); shown once. Every token expires: after expires_in seconds, or after the longest lifetime (${MAX_TOKEN_TTL_SECONDS / 86_400} days) when none is asked; at most ${MAX_TOKENS_PER_USER} live tokens per user.`,
      access: 'member',
      body: {
        type: 'object',
        additionalProperties: false,
        properties: {
          expires_in: {
            type: 'integer',
            minimum: MIN_TOKEN_TTL_SECONDS,
            maximum: MAX_TOKEN_TTL_SECONDS,
            description: `Seconds until the token stops working by itself; absent: ${MAX_TOKEN_TTL_SECONDS} (the longest).`,
          },
        },
      },
      responses: {
        201: { description: 'Created.', schema: { type: 'object', required: ['token', 'expires_at'], properties: { token: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } } } },
        409: { description: `The user already holds ${MAX_TOKENS_PER_USER} live tokens.` },
      },
      async handler({ body, principal }) {
        return { status: 201, body: await accounts.issueToken(principal, body.expires_in ?? null) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/tokens',
      tag: 'tokens',
      summary: "The caller's live tokens, newest first (never the tokens themselves): when each was made, when it expires, whether signing in made it, and which one this request used.",
      access: 'member',
      responses: {
        200: {
          description: 'The live tokens.',
          schema: {
            type: 'object',
            required: ['tokens'],
            properties: {
              tokens: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'created_at', 'expires_at', 'sign_in', 'current'],
                  properties: {
                    id: { type: 'string', format: 'uuid' },
                    created_at: { type: 'string', format: 'date-time' },
                    expires_at: { type: 'string', format: 'date-time' },
                    sign_in: { type: 'boolean', description: 'Made by signing in (POST /v1/auth/login or /v1/auth/password); false: POST /v1/tokens or the operator.' },
                    current: { type: 'boolean', description: 'The token of this request.' },
                  },
                },
              },
            },
          },
        },
      },
      async handler({ principal }) {
        return { status: 200, body: { tokens: await accounts.listTokens(principal) } };
      },
    }),

    // Before /v1/tokens/{id}: "current" is not an id.
    route({
      method: 'delete',
      path: '/v1/tokens/current',
      tag: 'tokens',
      summary: 'Revoke the token used for this request (sign out).',
      access: 'member',
      responses: { 204: { description: 'Revoked.' } },
      async handler({ principal }) {
        await accounts.revokeCurrentToken(principal);
        return { status: 204 };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/tokens/{id}',
      tag: 'tokens',
      summary: "Revoke one of the caller's own live tokens (GET /v1/tokens lists them); its open live streams end within 2 s.",
      access: 'member',
      responses: { 204: { description: 'Revoked.' }, 404: { description: 'The caller holds no live token with this id.' } },
      async handler({ params, principal }) {
        await accounts.revokeOwnToken(principal, params.id!);
        return { status: 204 };
      },
    }),
  ];
}
