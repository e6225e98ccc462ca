/**
 * What Twilio's two webhooks answer (docs/phone.md, "Connecting Twilio"), as TwiML: the voice webhook connects a call
 * to the phone WebSocket through ConversationRelay; the <Connect> action, when the relay session ended, dials the
 * transfer number after a human handoff while the team is available (otherwise the team follows up: until when it is
 * away, outside the team hours), reconnects a call handed back on drain, or says goodbye. The HTTP route (src/http/routes/phone.ts) checks Twilio's signature and hands the form parameters here.
 */
import type { PhoneRepository } from '../../../db/repositories/phone.repository.ts';
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import { connectCall, type TeamAvailabilityDeps } from '../../sessions/handoff.ts';
import type { Logger } from '../../log.ts';
import { parseHandoffData } from './frames.ts';
import { PHONE_DEFAULT_LANGUAGE } from './limits.ts';
import { ISSUED_PARAM, PHONE_WS_PATH } from './phone-channel.ts';
import { normaliseE164 } from './phone-number.ts';
import { phrase } from '../../ai/phrases.ts';
import { sayLanguage } from './say-language.ts';
import type { TeamAvailability } from './team-availability.ts';
import { connectTwiml, dialTwiml, hangUpTwiml, sayAndHangUpTwiml } from './twiml.ts';
import { publicRequestUrl } from './twilio-signature.ts';

export interface TwilioWebhookDeps {
  phone: Pick<PhoneRepository, 'settings' | 'workspaceForNumber'>;
  sessions: Pick<SessionsRepository, 'find' | 'addNotification'>;
  teamAvailable: TeamAvailability;
  /** Outside the team hours, when they open next: the caller hears until when the team is away; absent: not said. */
  teamOpensAt?: TeamAvailabilityDeps['teamOpensAt'];
  publicUrl: string;
  /** The <Connect> action's URL (PUBLIC_URL and its path). */
  actionPath: string;
  logger: Logger;
  /** The clock, ms (the `issued` stamp in the WebSocket URL); default Date.now. */
  now?: () => number;
}

/** Twilio's form parameters, one value each. */
export type TwilioForm = Record<string, string>;

export function createTwilioWebhooks(deps: TwilioWebhookDeps) {
  const { phone, sessions } = deps;
  const now = deps.now ?? Date.now;
  const websocketUrl = publicRequestUrl(deps.publicUrl, PHONE_WS_PATH, 'ws');
  const actionUrl = publicRequestUrl(deps.publicUrl, deps.actionPath, 'http');
  // The URL carries when it was issued, inside Twilio's signature, so a captured one cannot be replayed later.
  const issuedUrl = () => `${websocketUrl}?${ISSUED_PARAM}=${Math.floor(now() / 1000)}`;

  async function workspaceOf(form: TwilioForm): Promise<string | undefined> {
    const to = normaliseE164(form.To);
    return to ? phone.workspaceForNumber(to) : undefined;
  }

  return {
    /** The voice webhook: connect the call, or an apology when no workspace answers the called number. */
    async voice(form: TwilioForm): Promise<string> {
      const workspaceId = await workspaceOf(form);
      if (!workspaceId) {
        deps.logger.warn({ callSid: form.CallSid }, 'Twilio call to a number no workspace answers');
        return sayAndHangUpTwiml(phrase('unknown_number', 'en'), PHONE_DEFAULT_LANGUAGE);
      }
      const settings = await phone.settings(workspaceId);
      return connectTwiml({
        websocketUrl: issuedUrl(),
        actionUrl,
        language: settings?.language ?? PHONE_DEFAULT_LANGUAGE,
        welcomeGreeting: settings?.greeting ?? null,
      });
    },

    /** The <Connect> action after the relay session ended (HandoffData from our end frame). */
    async action(form: TwilioForm): Promise<string> {
      const handoff = parseHandoffData(form.HandoffData);
      // No handoff (a call that ended, or one refused as busy): hang up without reading the database.
      if (!handoff) return hangUpTwiml();
      const workspaceId = await workspaceOf(form);
      if (!workspaceId) return hangUpTwiml();
      const settings = await phone.settings(workspaceId);
      const workspaceLanguage = settings?.language ?? PHONE_DEFAULT_LANGUAGE;
      if (handoff.reason === 'reconnect') return connectTwiml({ websocketUrl: issuedUrl(), actionUrl, language: workspaceLanguage });
      const session = form.CallSid ? await sessions.find(workspaceId, 'phone', form.CallSid) : undefined;
      const language = session?.language ?? workspaceLanguage;
      const log = deps.logger.child({ workspaceId, sessionId: session?.id ?? null });
      if (handoff.reason === 'human') {
        // The handoff rule (src/sessions/handoff.ts) decides: dial the team, or the team follows up (protocol §2.2).
        const transferNumber = settings?.transfer_number ?? null;
        const connection = await connectCall(
          { sessions, teamAvailable: deps.teamAvailable, ...(deps.teamOpensAt ? { teamOpensAt: deps.teamOpensAt } : {}) },
          { workspaceId, sessionRowId: session?.id ?? null, language, transferNumber },
        );
        if ('dial' in connection) {
          log.info('handing the call to the team (Dial)');
          return dialTwiml(connection.dial);
        }
        log.info({ transferNumber: transferNumber !== null }, 'no person to dial; the team follows up');
        return sayAndHangUpTwiml(connection.sentence, sayLanguage(language, workspaceLanguage));
      }
      return sayAndHangUpTwiml(phrase('goodbye', language), sayLanguage(language, workspaceLanguage));
    },
  };
}

export type TwilioWebhooks = ReturnType<typeof createTwilioWebhooks>;
