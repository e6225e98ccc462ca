/**
 * The phone channel's HTTP routes (docs/interfaces.md, Dashboard API and Channels → Phone; docs/phone.md):
 *
 * - `PUT /v1/phone`, `GET /v1/phone`: the numbers a workspace answers, the transfer number, team hours, the call
 *   language and greeting (owners and admins).
 * - `POST /v1/phone/twilio/voice`: Twilio's voice webhook; answers TwiML that connects the call to GET /v1/phone/ws.
 * - `POST /v1/phone/twilio/action`: Twilio's <Connect> action when the relay session ended; after a human handoff it
 *   dials the transfer number while the team is available, otherwise it says the team follows up (until when it is
 *   away, outside the team hours) and hangs up.
 *
 * Twilio posts form-encoded bodies (src/http/app.ts parses them for /v1/phone/twilio only) and, when
 * TWILIO_AUTH_TOKEN is set, both Twilio routes require a valid X-Twilio-Signature.
 */
import type { Request } from 'express';
import type { PhoneRepository } from '../../../db/repositories/phone.repository.ts';
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import { PHONE_DEFAULT_LANGUAGE, PHONE_MAX_GREETING_CHARS, PHONE_MAX_NUMBERS, TWILIO_WEBHOOK_PREFIX } from '../../channels/phone/limits.ts';
import { isNationalNumber, readPhoneNumber } from '../../channels/phone/phone-number.ts';
import type { TeamAvailability } from '../../channels/phone/team-availability.ts';
import { teamHoursProblems, teamHoursSchema, type TeamHours } from '../../channels/phone/team-hours.ts';
import { createTwilioWebhooks, type TwilioWebhookDeps } from '../../channels/phone/twilio-webhooks.ts';
import { publicRequestUrl, verifyTwilioSignature, type FormParams } from '../../channels/phone/twilio-signature.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { route, type RouteDefinition } from '../route.ts';
import { phoneReadiness } from './workspace.ts';

export const TWILIO_VOICE_PATH = `${TWILIO_WEBHOOK_PREFIX}/voice`;
export const TWILIO_ACTION_PATH = `${TWILIO_WEBHOOK_PREFIX}/action`;

export interface PhoneRouteDeps {
  phone: PhoneRepository;
  sessions: Pick<SessionsRepository, 'find' | 'addNotification'>;
  teamAvailable: TeamAvailability;
  /** Outside the team hours, when they open next (the action's "away until …"); absent: not said. */
  teamOpensAt?: TwilioWebhookDeps['teamOpensAt'];
  publicUrl: string;
  twilioAuthToken: string | null;
  /** With twilioAuthToken, whether calls can connect at all (GET /v1/phone `calls`; docs/phone.md). */
  bridgeToken?: string | null;
  logger: Logger;
  /** The clock, ms (the `issued` stamp in the WebSocket URL); default Date.now. */
  now?: () => number;
}

interface PhoneBody {
  numbers: string[];
  country?: string | null;
  transfer_number?: string | null;
  team_hours?: TeamHours | null;
  language?: string;
  greeting?: string | null;
}

/**
 * A number as people type it; checked by readPhoneNumber (not by a pattern), so a mistake is answered in words
 * and names its field (docs/phone.md, "Numbers").
 */
const NUMBER = {
  type: 'string',
  maxLength: 40,
  description: "Any common notation: '+44 20 1234 5678', '0044 20 1234 5678', or '020 1234 5678' with `country`; spaces, dashes, dots, brackets, a '(0)' and a leading 'tel:' are removed. Answered in E.164.",
};
/** Words for a number that could not be read, naming what was typed. */
function unreadable(raw: string, country: string | null | undefined): string {
  const shown = raw.trim().slice(0, 40) || '(empty)';
  if (isNationalNumber(raw) && !country) return `${shown} has no country code. Choose the country above, or write it with + and the country code, like +44 20 1234 5678.`;
  return `${shown} is not a phone number we can read. Write it like +44 20 1234 5678 (with the country code), or as you dial it in your country with the country chosen above.`;
}
/**
 * What Twilio posts (form-encoded) to the voice and action webhooks, as far as we read it; Twilio sends more
 * parameters, all strings, and every one of them is covered by X-Twilio-Signature.
 */
const twilioFormBody = (action: boolean) => ({
  contentType: 'application/x-www-form-urlencoded',
  schema: {
    type: 'object',
    properties: {
      CallSid: { type: 'string', description: 'The call; the phone session of the call is found by it.' },
      From: { type: 'string' },
      To: { type: 'string', description: 'The called number: the workspace whose numbers (PUT /v1/phone) include it answers.' },
      ...(action ? { HandoffData: { type: 'string', description: 'The handoffData of our end frame, JSON with `reason`: human, forward or reconnect.' } } : {}),
    },
    additionalProperties: { type: 'string' },
  },
});
const twimlAnswer = { description: 'TwiML.', schema: { type: 'string' }, contentType: 'text/xml' };
/** BCP 47 as ConversationRelay takes it ('nl-NL', 'en-US', 'multi'). */
const LANGUAGE_TAG = '^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$';

const phoneSettingsSchema = {
  type: 'object',
  required: ['numbers', 'transfer_number', 'team_hours', 'language', 'greeting', 'team_available', 'available_now', 'updated_at', 'voice_url', 'calls'],
  properties: {
    numbers: { type: 'array', items: { type: 'string' } },
    transfer_number: { type: ['string', 'null'] },
    // As PUT stored it, after the same schema.
    team_hours: { anyOf: [teamHoursSchema, { type: 'null' }] },
    language: { type: 'string' },
    greeting: { type: ['string', 'null'] },
    team_available: { type: 'boolean', description: 'The manual switch (PUT /v1/team).' },
    available_now: { type: 'boolean', description: 'The switch, and now inside team_hours when set: whether a human handoff connects now.' },
    updated_at: { type: ['string', 'null'] },
    voice_url: { type: 'string', description: "The URL to paste into Twilio as the number's voice webhook (\"A call comes in\", HTTP POST)." },
    calls: {
      type: 'object',
      description: 'Whether calls can come in yet, and if not a sentence saying why and who can change it.',
      required: ['ready', 'reason'],
      properties: { ready: { type: 'boolean' }, reason: { type: ['string', 'null'] } },
    },
  },
};

const twiml = (body: string) => ({ status: 200, body, headers: { 'content-type': 'text/xml; charset=utf-8' } });

export function phoneRoutes(deps: PhoneRouteDeps): RouteDefinition[] {
  const { phone } = deps;
  const webhooks = createTwilioWebhooks({ ...deps, actionPath: TWILIO_ACTION_PATH });

  async function view(workspaceId: string) {
    const [settings, state, availableNow] = await Promise.all([phone.settings(workspaceId), phone.teamState(workspaceId), deps.teamAvailable(workspaceId)]);
    return {
      numbers: settings?.numbers ?? [],
      transfer_number: settings?.transfer_number ?? null,
      team_hours: settings?.team_hours ?? null,
      language: settings?.language ?? PHONE_DEFAULT_LANGUAGE,
      greeting: settings?.greeting ?? null,
      team_available: state?.switchOn ?? false,
      available_now: availableNow,
      updated_at: settings?.updated_at ? settings.updated_at.toISOString() : null,
      voice_url: `${deps.publicUrl}${TWILIO_VOICE_PATH}`,
      calls: phoneReadiness({ twilioAuthToken: deps.twilioAuthToken, bridgeToken: deps.bridgeToken ?? null, publicUrl: deps.publicUrl }),
    };
  }

  /** The form parameters Twilio posted, checked against X-Twilio-Signature when TWILIO_AUTH_TOKEN is set. */
  function twilioForm(req: Request): Record<string, string> {
    const params = (req.body ?? {}) as FormParams;
    if (deps.twilioAuthToken) {
      const url = publicRequestUrl(deps.publicUrl, req.originalUrl, 'http');
      if (!verifyTwilioSignature(deps.twilioAuthToken, req.headers['x-twilio-signature'], url, params)) {
        deps.logger.warn({ path: req.path }, 'Twilio webhook refused: X-Twilio-Signature is missing or wrong');
        throw new AppError('unauthorized', 'X-Twilio-Signature is missing or does not match this request.');
      }
    }
    const flat: Record<string, string> = {};
    for (const [k, v] of Object.entries(params)) if (v !== undefined) flat[k] = Array.isArray(v) ? (v[0] ?? '') : v;
    return flat;
  }


  return [
    route<PhoneBody>({
      method: 'put',
      path: '/v1/phone',
      tag: 'phone',
      summary:
        'The phone numbers this workspace answers (E.164, each in one workspace only: 409 otherwise), the transfer number for human handoffs, team hours, and the call language and greeting. Replaces the settings as a whole.',
      access: 'manager',
      body: {
        type: 'object',
        required: ['numbers'],
        additionalProperties: false,
        properties: {
          numbers: { type: 'array', maxItems: PHONE_MAX_NUMBERS, items: NUMBER },
          country: { type: ['string', 'null'], pattern: '^[1-9][0-9]{0,2}$', description: "The calling code (like '44' or '31') for numbers written the national way, without + or 00." },
          transfer_number: { ...NUMBER, type: ['string', 'null'] },
          team_hours: { anyOf: [teamHoursSchema, { type: 'null' }], description: "Weekly opening hours in an IANA time zone: { time_zone: 'Europe/Amsterdam', week: { mon: [['09:00','17:30']], … } }. null or absent: the team switch alone decides." },
          language: { type: 'string', maxLength: 35, pattern: LANGUAGE_TAG, description: `BCP 47 language of speech recognition and voice; default ${PHONE_DEFAULT_LANGUAGE}.` },
          greeting: { anyOf: [{ type: 'string', maxLength: PHONE_MAX_GREETING_CHARS }, { type: 'null' }], description: 'Spoken first when a call connects.' },
        },
      },
      responses: {
        200: { description: 'Saved; the settings as stored.', schema: phoneSettingsSchema },
        409: { description: 'A number is answered by another workspace.' },
      },
      async handler({ body, principal }) {
        const problems: { field: string; message: string }[] = [];
        const numbers: string[] = [];
        body.numbers.forEach((raw, i) => {
          if (!raw.trim()) return;
          const n = readPhoneNumber(raw, body.country);
          if (!n) problems.push({ field: `numbers.${i}`, message: unreadable(raw, body.country) });
          else if (!numbers.includes(n)) numbers.push(n);
        });
        let transfer: string | null = null;
        if (body.transfer_number != null && body.transfer_number.trim()) {
          transfer = readPhoneNumber(body.transfer_number, body.country);
          if (!transfer) problems.push({ field: 'transfer_number', message: unreadable(body.transfer_number, body.country) });
        }
        if (body.team_hours) problems.push(...teamHoursProblems(body.team_hours));
        if (problems.length > 0) throw new AppError('validation_failed', problems[0]!.field.startsWith('team_hours') ? `${problems[0]!.field} ${problems[0]!.message}.` : problems[0]!.message, problems);

        const saved = await phone.save(principal.workspaceId, {
          numbers,
          transfer_number: transfer,
          team_hours: body.team_hours ?? null,
          language: body.language ?? PHONE_DEFAULT_LANGUAGE,
          greeting: body.greeting?.trim() ? body.greeting.trim() : null,
        });
        if (!saved.ok) {
          throw new AppError('conflict', `${saved.taken.join(', ')} ${saved.taken.length === 1 ? 'is' : 'are'} answered by another workspace.`, saved.taken.map((n) => ({ field: `numbers.${body.numbers.findIndex((r) => readPhoneNumber(r, body.country) === n)}`, message: `${n} is already answered by another workspace.` })));
        }
        return { status: 200, body: await view(principal.workspaceId) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/phone',
      tag: 'phone',
      summary: 'The phone settings, the team switch and whether a human handoff would connect now (switch and team hours).',
      access: 'manager',
      responses: { 200: { description: 'The settings; empty defaults when none were saved.', schema: phoneSettingsSchema } },
      async handler({ principal }) {
        return { status: 200, body: await view(principal.workspaceId) };
      },
    }),

    route({
      method: 'post',
      path: TWILIO_VOICE_PATH,
      tag: 'phone',
      summary:
        "Twilio's voice webhook (form-encoded; X-Twilio-Signature when TWILIO_AUTH_TOKEN is set). Answers TwiML that connects the call to the phone WebSocket through ConversationRelay, or an apology when no workspace answers the called number.",
      access: 'public',
      describedBody: twilioFormBody(false),
      responses: { 200: twimlAnswer, 401: { description: 'The Twilio signature is missing or wrong.' } },
      async handler({ req }) {
        return twiml(await webhooks.voice(twilioForm(req)));
      },
    }),

    route({
      method: 'post',
      path: TWILIO_ACTION_PATH,
      tag: 'phone',
      summary:
        "Twilio's <Connect> action after the relay session ended (form-encoded, HandoffData from our end frame). Human handoff: Dial the transfer number while the team is available, otherwise the sentence that the team follows up (outside the team hours: until when it is away) and a hang-up; reconnect (drain): connect the call again.",
      access: 'public',
      describedBody: twilioFormBody(true),
      responses: { 200: twimlAnswer, 401: { description: 'The Twilio signature is missing or wrong.' } },
      async handler({ req }) {
        return twiml(await webhooks.action(twilioForm(req)));
      },
    }),
  ];
}
