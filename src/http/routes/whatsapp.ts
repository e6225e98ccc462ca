/**
 * WhatsApp (docs/interfaces.md: Channels → WhatsApp, Dashboard API): Meta's webhook (the GET verify handshake and the
 * signed POST) and the workspace's settings (owners and admins only). docs/whatsapp.md tells the whole story.
 */
import type { WhatsappChannel } from '../../channels/whatsapp/whatsapp-channel.ts';
import { WHATSAPP_SIGNATURE_HEADER, WHATSAPP_WEBHOOK_PATH } from '../../channels/whatsapp/limits.ts';
import { AppError } from '../../errors.ts';
import { errorSchema, route, type RouteDefinition } from '../route.ts';

const settingsSchema = {
  type: 'object',
  properties: {
    phone_number_id: { type: 'string' },
    token_hint: { type: 'string', description: 'The last characters of the access token; the token itself is never shown.' },
    webhook_url: { type: 'string', description: "The callback URL to enter in Meta's app dashboard." },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

const notConfigured = (what: string) => new AppError('unavailable', `WhatsApp is not configured on this server: ${what} is not set.`);

export function whatsappRoutes(whatsapp: WhatsappChannel): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: WHATSAPP_WEBHOOK_PATH,
      tag: 'whatsapp',
      summary: "Meta's verify handshake: hub.mode=subscribe and hub.verify_token equal to WHATSAPP_VERIFY_TOKEN → 200 text/plain hub.challenge; anything else 403.",
      access: 'public',
      query: {
        'hub.mode': { type: 'string', enum: ['subscribe'] },
        'hub.verify_token': { type: 'string', description: 'Must equal WHATSAPP_VERIFY_TOKEN.' },
        'hub.challenge': { type: 'string', pattern: '^[\\x21-\\x7e]{1,256}$', description: 'Answered back as the body: printable ASCII, at most 256 characters.' },
      },
      responses: {
        200: { description: 'The challenge.', schema: { type: 'string' }, contentType: 'text/plain' },
        403: { description: 'Not our verify token.', schema: errorSchema },
        503: { description: 'WHATSAPP_VERIFY_TOKEN is not set.', schema: errorSchema },
      },
      async handler({ req }) {
        const query = req.query as Record<string, unknown>;
        const challenge = whatsapp.handshake({ mode: query['hub.mode'], token: query['hub.verify_token'], challenge: query['hub.challenge'] });
        if (challenge === undefined) throw notConfigured('WHATSAPP_VERIFY_TOKEN');
        if (challenge === null) throw new AppError('forbidden', 'The verify token does not match.');
        return { status: 200, body: challenge, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } };
      },
    }),

    route({
      method: 'post',
      path: WHATSAPP_WEBHOOK_PATH,
      tag: 'whatsapp',
      summary:
        "Meta's webhook (messages and statuses). X-Hub-Signature-256 must be sha256= + the hex HMAC-SHA256 of the raw body with WHATSAPP_APP_SECRET (401 otherwise). " +
        'The body is committed before the 200 and processed afterwards; a phone_number_id no workspace has connected is stored and ignored (still 200).',
      access: 'public',
      describedBody: {
        contentType: 'application/json',
        required: true,
        schema: {
          type: 'object',
          description: "Meta's webhook payload, read tolerantly (docs/whatsapp.md): what we do not use is ignored, a malformed message is skipped.",
          properties: {
            object: { type: 'string', description: 'whatsapp_business_account' },
            entry: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, changes: { type: 'array', items: { type: 'object' } } } } },
          },
        },
      },
      responses: {
        200: { description: 'Stored; it will be processed.' },
        401: { description: 'The signature is missing or wrong; nothing was stored.', schema: errorSchema },
        503: { description: 'WHATSAPP_APP_SECRET is not set.', schema: errorSchema },
      },
      async handler({ req }) {
        // src/http/app.ts hands this path the raw bytes: the signature covers them exactly as sent.
        if (!Buffer.isBuffer(req.body)) throw new AppError('internal', 'The raw body of the WhatsApp webhook is not available.');
        const result = await whatsapp.receive(req.body, req.get(WHATSAPP_SIGNATURE_HEADER));
        if (result === 'not_configured') throw notConfigured('WHATSAPP_APP_SECRET');
        if (result === 'unauthorized') {
          // Not thrown: the shared handler would add `WWW-Authenticate: Bearer`, which is not how Meta authenticates.
          return { status: 401, body: new AppError('unauthorized', 'The X-Hub-Signature-256 signature is missing or does not match the body.').toJSON() };
        }
        return { status: 200 };
      },
    }),

    route({
      method: 'get',
      path: '/v1/whatsapp',
      tag: 'whatsapp',
      summary: "The workspace's WhatsApp business number and a hint of its access token (never the token).",
      access: 'manager',
      responses: { 200: { description: 'The settings.', schema: settingsSchema }, 404: { description: 'Not configured.', schema: errorSchema } },
      async handler({ workspaceId }) {
        return { status: 200, body: await whatsapp.settings.get(workspaceId) };
      },
    }),

    route<{ phone_number_id: string; access_token: string }>({
      method: 'put',
      path: '/v1/whatsapp',
      tag: 'whatsapp',
      summary: "Connect a WhatsApp business number: Meta's phone_number_id and the Graph API access token replies are sent with (sealed at rest; answered with a hint only).",
      access: 'manager',
      body: {
        type: 'object',
        required: ['phone_number_id', 'access_token'],
        additionalProperties: false,
        properties: {
          phone_number_id: { type: 'string', pattern: '^[0-9]{1,64}$', description: "Meta's id of the business number (digits), not the phone number." },
          access_token: { type: 'string', minLength: 1, maxLength: 4096, pattern: '^[\\x21-\\x7e]+$' },
        },
      },
      responses: {
        200: { description: 'Saved.', schema: settingsSchema },
        409: { description: 'Another workspace has connected this phone_number_id.', schema: errorSchema },
      },
      async handler({ body, workspaceId }) {
        return { status: 200, body: await whatsapp.settings.put(workspaceId, body) };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/whatsapp',
      tag: 'whatsapp',
      summary: 'Disconnect the WhatsApp number: its webhooks are stored and ignored from now on, and no more replies are sent.',
      access: 'manager',
      responses: { 204: { description: 'Removed.' }, 404: { description: 'Not configured.', schema: errorSchema } },
      async handler({ workspaceId }) {
        await whatsapp.settings.remove(workspaceId);
        return { status: 204 };
      },
    }),
  ];
}
