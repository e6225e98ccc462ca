/**
 * Signing in for people (docs/interfaces.md: Pages and tools for people): email and password, and a password set through a
 * one-time invite link. Both are public and answer a new bearer token; signing out is DELETE /v1/tokens/current.
 */
import type { SignInService } from '../../accounts/sign-in-service.ts';
import { AppError } from '../../errors.ts';
import {
  LOGIN_FAILURE_WINDOW_MS,
  LOGIN_FAILURES_PER_ACCOUNT,
  LOGIN_FAILURES_PER_ADDRESS,
  MAX_PASSWORD_CHARS,
  MAX_USER_NAME_CHARS,
  MIN_PASSWORD_CHARS,
} from '../../limits.ts';
import { route, type RouteDefinition } from '../route.ts';

const signedInSchema = {
  type: 'object',
  required: ['token', 'expires_at', 'user', 'workspace'],
  properties: {
    token: { type: 'string', description: 'A bearer token of the user, shown once.' },
    expires_at: { type: 'string', format: 'date-time' },
    user: {
      type: 'object',
      required: ['id', 'email', 'role'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        email: { type: 'string' },
        name: { type: ['string', 'null'], description: 'The display name; null: none given.' },
        role: { type: 'string', enum: ['owner', 'admin', 'agent'] },
      },
    },
    workspace: {
      type: 'object',
      required: ['id', 'name'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        name: { type: 'string' },
        time_zone: { type: ['string', 'null'], description: 'IANA time zone the dashboard shows times in; null: not chosen.' },
      },
    },
  },
};

export function authRoutes(signIn: SignInService): RouteDefinition[] {
  return [
    route<{ email: string; password: string; workspace_id?: string }>({
      method: 'post',
      path: '/v1/auth/login',
      tag: 'auth',
      summary:
        'Sign in with email and password: a new token for the user (it expires after 30 days; at the limit of live tokens the oldest made by signing in, else the oldest, is revoked). ' +
        `After ${LOGIN_FAILURES_PER_ACCOUNT} failures for one account or ${LOGIN_FAILURES_PER_ADDRESS} from one address within ${LOGIN_FAILURE_WINDOW_MS / 60_000} minutes, attempts wait (429, Retry-After), longer after each failure; ` +
        "every attempt counts before its password is checked, and an account's failures do not hold up the addresses its user signed in from recently.",
      access: 'public',
      body: {
        type: 'object',
        required: ['email', 'password'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', format: 'email', maxLength: 254 },
          password: { type: 'string', minLength: 1, maxLength: MAX_PASSWORD_CHARS },
          workspace_id: { type: 'string', format: 'uuid', description: 'Only when the email signs in to several workspaces (after a 409).' },
        },
      },
      responses: {
        200: { description: 'Signed in.', schema: signedInSchema },
        401: { description: 'The email or the password is not right (the answer does not say which).' },
        409: {
          description: 'The email and password fit several workspaces: `error.details.workspaces` lists them ({id, name}); send `workspace_id`.',
        },
        429: { description: 'Too many failed sign-ins for this account or from this address, or too many sign-ins at once from this address or for this email; see Retry-After (seconds).' },
      },
      async handler({ body, req, res }) {
        try {
          const signedIn = await signIn.login({ email: body.email, password: body.password, ...(body.workspace_id ? { workspaceId: body.workspace_id } : {}), address: req.ip ?? '' });
          return { status: 200, body: signedIn, headers: { 'Cache-Control': 'no-store' } };
        } catch (err) {
          if (err instanceof AppError && err.code === 'rate_limited') res.setHeader('Retry-After', String((err.details as { retry_after: number }).retry_after));
          throw err;
        }
      },
    }),

    route<{ email: string }>({
      method: 'post',
      path: '/v1/auth/reset',
      tag: 'auth',
      summary:
        'Forgot password: when this email signs in to a workspace (and SMTP_URL is set), a one-time link to choose a new password is emailed to it, one per workspace; it works once, for 1 hour, and replaces older unused links. ' +
        'The answer is 202 whether or not the email is known. Limited per address and per email (5, then one a minute): beyond it 429 rate_limited with Retry-After.',
      access: 'public',
      body: { type: 'object', required: ['email'], additionalProperties: false, properties: { email: { type: 'string', minLength: 3, maxLength: 254 } } },
      responses: {
        202: { description: 'Taken: an email is on its way if the address signs in anywhere.', schema: { type: 'object' } },
        429: { description: 'Too many resets from this address or for this email (rate_limited); Retry-After says when to try again.' },
      },
      async handler({ body, req, res }) {
        try {
          signIn.requestReset({ email: body.email, address: req.ip ?? '' });
        } catch (err) {
          if (err instanceof AppError && err.code === 'rate_limited') res.setHeader('Retry-After', String((err.details as { retry_after: number }).retry_after));
          throw err;
        }
        return { status: 202, body: {}, headers: { 'Cache-Control': 'no-store' } };
      },
    }),

    route<{ invite?: string; reset?: string; password: string; name?: string | null }>({
      method: 'post',
      path: '/v1/auth/password',
      tag: 'auth',
      summary: `Set a password with a one-time link's token (the part after # in invite_url, or in the emailed reset link) and sign in. A password has ${MIN_PASSWORD_CHARS} to ${MAX_PASSWORD_CHARS} characters and is not only whitespace. An invite works once, for 7 days; a reset link once, for 1 hour.`,
      access: 'public',
      body: {
        type: 'object',
        required: ['password'],
        additionalProperties: false,
        properties: {
          invite: { type: 'string', minLength: 1, maxLength: 200 },
          reset: { type: 'string', minLength: 1, maxLength: 200, description: 'The token of an emailed reset link (POST /v1/auth/reset).' },
          password: { type: 'string', minLength: MIN_PASSWORD_CHARS, maxLength: MAX_PASSWORD_CHARS, description: 'Characters are Unicode code points; not only whitespace.' },
          name: {
            type: ['string', 'null'],
            maxLength: MAX_USER_NAME_CHARS,
            description: `The name colleagues and customers will see, given when accepting an invite: at most ${MAX_USER_NAME_CHARS} characters, trimmed; empty removes it; absent keeps the one given with the invite.`,
          },
        },
      },
      responses: {
        200: { description: 'The password is set; signed in.', schema: signedInSchema },
        400: { description: 'The password breaks a rule; the message says which.' },
        404: { description: 'No such invite.' },
        410: { description: 'The invite was used, replaced by a newer one, or expired; the message says which.' },
      },
      async handler({ body }) {
        // An invite's token or a reset's: the same one-time tokens, named apart for the reader; none is no known link (404).
        const name = body.name === undefined ? {} : { name: body.name };
        return { status: 200, body: await signIn.setPassword({ invite: body.reset ?? body.invite ?? '', password: body.password, ...name }), headers: { 'Cache-Control': 'no-store' } };
      },
    }),
  ];
}
