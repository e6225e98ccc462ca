/**
 * The handoff rule (protocol §2.2), in one place: what a `human` or `forward` handoff becomes for the customer and
 * for the team. 'human' connects a person, on the phone only when the team is available; otherwise it becomes a
 * follow-up. 'forward': the customer is told and the team is notified.
 */
import { randomUUID } from 'node:crypto';
import type { HandoffResult } from '../../machines/session-types.ts';
import type { SessionsRepository } from '../../db/repositories/sessions.repository.ts';
import { phrase } from '../ai/phrases.ts';
import type { Channel, Handoff } from '../words.ts';

export interface HandoffDeps {
  sessions: Pick<SessionsRepository, 'teamAvailable' | 'addNotification'>;
  /**
   * Phone (src/channels/phone/team-availability.ts): whether the team can take a human handoff now, the manual switch
   * and the team hours together; absent: the manual switch alone (`sessions.teamAvailable`).
   */
  teamAvailable?: (workspaceId: string) => Promise<boolean>;
}

export interface HandoffRequest {
  workspaceId: string;
  channel: Channel;
  kind: Handoff;
  language: string;
  /** The customer's message that led to the handoff; the team's notification quotes its start. */
  message: string;
  /** The session's row id, when the session is live in this process. */
  sessionId: string | null;
}

/** The longest quote of the customer's message in a notification. */
const NOTIFICATION_QUOTE_CHARS = 500;

export async function decideHandoff(deps: HandoffDeps, request: HandoffRequest): Promise<HandoffResult> {
  const { workspaceId, channel, kind, language } = request;
  const teamAvailable = deps.teamAvailable ? await deps.teamAvailable(workspaceId) : await deps.sessions.teamAvailable(workspaceId);
  if (kind === 'human' && channel === 'phone' && teamAvailable) {
    return { kind: 'human', connected: true, sentence: phrase('handoff_human', language) };
  }
  await deps.sessions.addNotification({
    id: randomUUID(),
    workspace_id: workspaceId,
    session_id: request.sessionId,
    kind: kind === 'human' ? 'human_followup' : 'forward',
    message: request.message.slice(0, NOTIFICATION_QUOTE_CHARS),
  });
  const sentence = kind === 'human' && !teamAvailable ? phrase('team_unavailable', language) : phrase('handoff_forward', language);
  return { kind, connected: false, sentence };
}
