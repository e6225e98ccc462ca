/**
 * The handoff rule (protocol §2.2), in one place: what a `human` or `forward` handoff becomes for the customer and
 * for the team. 'human' connects a person, on the phone only when the team is available; otherwise it becomes a
 * follow-up. 'forward': the customer is told and the team is notified. The handoff is announced once, in the
 * conversation's language: when the reply already says it, nothing is added (handoff-announcements.ts).
 */
import { randomUUID } from 'node:crypto';
import type { HandoffInput, HandoffResult } from '../../machines/session-types.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { awayUntilPhrase, phrase } from '../ai/phrases.ts';
import { announces } from './handoff-announcements.ts';

export interface HandoffDeps {
  sessions: Pick<SessionsRepository, 'addNotification'> & Partial<Pick<SessionsRepository, 'handbackAfterMinutes'>>;
  /**
   * Whether the team can take a person now (src/channels/phone/team-availability.ts: someone of the team available,
   * within the team hours when set).
   */
  teamAvailable: (workspaceId: string) => Promise<boolean>;
  /** Outside the team hours, when they open next, so the customer is told until when the team is away; absent: not said. */
  teamOpensAt?: (workspaceId: string) => Promise<{ day: string; time: string; today: boolean } | null>;
  /** The clock (ms); default Date.now. */
  now?: () => number;
}

/** The longest quote of the customer's message in a notification. */
const NOTIFICATION_QUOTE_CHARS = 500;

/**
 * `request` is the session machine's handoff input (its `conversationId` is the conversation's id on its channel, as the
 * integrator sees it); `sessionRowId` is our row id of the session, for the team's notification, or null when the
 * session is not live in this process.
 */
export async function decideHandoff(deps: HandoffDeps, request: HandoffInput, sessionRowId: string | null): Promise<HandoffResult> {
  const { workspaceId, channel, kind, language } = request;
  const teamAvailable = await deps.teamAvailable(workspaceId);
  if (kind === 'human' && channel === 'phone' && teamAvailable) {
    return { kind: 'human', connected: true, sentence: announces(request.reply, 'connect') ? '' : phrase('handoff_human', language), requestedBy: request.requestedBy };
  }
  if (kind === 'human' && channel !== 'phone') {
    // WhatsApp and web chat: the conversation waits for a colleague in the team's inbox, who answers here
    // (docs/architecture.md, "Who handles a conversation"); the customer is told once, in their language.
    await deps.sessions.addNotification({
      id: randomUUID(),
      workspace_id: workspaceId,
      session_id: sessionRowId,
      kind: 'human_followup',
      message: notificationText(request),
    });
    const at = (deps.now ?? Date.now)();
    const minutes = (await deps.sessions.handbackAfterMinutes?.(workspaceId)) ?? null;
    const said = announces(request.reply, 'connect') || announces(request.reply, 'follow_up');
    return {
      kind: 'human',
      connected: false,
      sentence: said ? '' : await waitingSentence(deps, workspaceId, language, teamAvailable),
      requestedBy: request.requestedBy,
      waiting: { since: at, handbackAt: minutes === null ? null : at + minutes * 60_000 },
    };
  }
  await deps.sessions.addNotification({
    id: randomUUID(),
    workspace_id: workspaceId,
    session_id: sessionRowId,
    kind: kind === 'human' ? 'human_followup' : 'forward',
    message: notificationText(request),
  });
  // Said once: nothing is added when the reply already promises the follow-up; a reply that promised a person the
  // team cannot give now (or a channel without calls) gets the sentence that says what happens instead.
  const sentence = announces(request.reply, 'follow_up')
    ? ''
    : kind === 'human' && !teamAvailable
      ? await awaySentence(deps, workspaceId, 'team_unavailable', language)
      : phrase('handoff_forward', language);
  return { kind, connected: false, sentence, requestedBy: request.requestedBy };
}

/** What the team's notification says: the customer's words, and that the customer asked (by key, button or words). */
function notificationText(request: HandoffInput): string {
  const quoted = request.message.trim().slice(0, NOTIFICATION_QUOTE_CHARS);
  if (request.requestedBy === 'integrator') return quoted;
  const keyed = /^[0-9*#]+$/.test(quoted);
  if (request.channel === 'phone' && keyed) return 'The caller pressed 0 to speak to a person.';
  const asked = request.channel === 'phone' ? 'The caller asked for a person.' : 'The customer asked for a person.';
  return quoted === '' || keyed ? asked : `${asked} ${quoted}`.slice(0, NOTIFICATION_QUOTE_CHARS);
}

/** What the telephony bridge does with a call handed to a person: dial the team, or say the follow-up and hang up. */
export type CallConnection = { dial: string } | { sentence: string };

/**
 * The second half of a connected handoff on the phone: the call has left the relay and the bridge asks whom to dial.
 * The team is asked again (team hours may have ended, the switch gone off, since the handoff was promised); without a
 * person to dial the team follows up instead, as for any handoff that could not connect.
 */
export async function connectCall(
  deps: HandoffDeps,
  request: { workspaceId: string; sessionRowId: string | null; language: string; transferNumber: string | null },
): Promise<CallConnection> {
  const { workspaceId, transferNumber } = request;
  const teamAvailable = await deps.teamAvailable(workspaceId);
  if (transferNumber && teamAvailable) return { dial: transferNumber };
  await deps.sessions.addNotification({
    id: randomUUID(),
    workspace_id: workspaceId,
    session_id: request.sessionRowId,
    kind: 'human_followup',
    message: transferNumber
      ? 'The caller was to be connected, but the team was no longer available.'
      : 'The caller was to be connected, but no transfer number is set (PUT /v1/phone).',
  });
  return { sentence: await awaySentence(deps, workspaceId, 'team_unavailable', request.language) };
}

/** The team's availability as every channel reads it (src/channels/phone/team-availability.ts). */
export type TeamAvailabilityDeps = Pick<HandoffDeps, 'teamAvailable' | 'teamOpensAt'>;

/**
 * What a web chat or WhatsApp customer whose conversation waits for a person is told: a colleague replies here while
 * someone of the team is available; outside the team hours until when the team is away; otherwise that they reply when
 * they are back. The handoff says it, and so does the web chat to a conversation already waiting or held
 * (src/channels/webchat/webchat-service.ts). `available`: the team's availability when the caller just read it.
 */
export async function waitingSentence(deps: TeamAvailabilityDeps, workspaceId: string, language: string, available?: boolean): Promise<string> {
  if (available ?? (await deps.teamAvailable(workspaceId))) return phrase('handoff_waiting', language);
  return awaySentence(deps, workspaceId, 'handoff_waiting_closed', language);
}

/** What the customer is told while the team is away: until when, outside the team hours; otherwise that they will be back. */
async function awaySentence(deps: TeamAvailabilityDeps, workspaceId: string, key: 'handoff_waiting_closed' | 'team_unavailable', language: string): Promise<string> {
  const opening = (await deps.teamOpensAt?.(workspaceId)) ?? null;
  if (opening === null) return phrase(key, language);
  return awayUntilPhrase(key === 'handoff_waiting_closed' ? 'handoff_waiting_until' : 'team_unavailable_until', language, opening);
}
