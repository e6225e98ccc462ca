/**
 * Whether the team can take a person now, for every channel (docs/architecture.md, "Presence and assignment"): at
 * least one person of the team is available (PUT /v1/me/presence; "available" lapses without an open dashboard), and
 * now lies inside the team hours when they are set (the hours hold for web chat and WhatsApp too, not the phone only).
 * Outside the hours it also knows when they open next, so a customer is told until when the team is away.
 */
import type { PhoneRepository } from '../../../db/repositories/phone.repository.ts';
import type { TeamPresenceRepository } from '../../../db/repositories/team-presence.repository.ts';
import { nextOpening, withinTeamHours, type TeamHours, type TeamOpening } from './team-hours.ts';

export type TeamAvailability = (workspaceId: string) => Promise<boolean>;

export interface TeamStatus {
  available: boolean;
  /** When the team hours open next, while now is outside them; null inside them or without hours. */
  opensAt: TeamOpening | null;
}

export function createTeamAvailability(deps: {
  phone: Pick<PhoneRepository, 'teamState'>;
  presence: Pick<TeamPresenceRepository, 'anyAvailable'>;
  /** PRESENCE_IDLE_MINUTES. */
  idleMinutes: number;
  now?: () => number;
}) {
  const now = deps.now ?? Date.now;
  async function status(workspaceId: string): Promise<TeamStatus> {
    const [state, anyone] = await Promise.all([deps.phone.teamState(workspaceId), deps.presence.anyAvailable(workspaceId, deps.idleMinutes)]);
    const hours = (state?.teamHours ?? null) as TeamHours | null;
    const at = new Date(now());
    if (hours !== null && !withinTeamHours(hours, at)) return { available: false, opensAt: nextOpening(hours, at) };
    return { available: anyone, opensAt: null };
  }
  const available: TeamAvailability = async (workspaceId) => (await status(workspaceId)).available;
  return {
    status,
    /** Whether a person can be had now: what the handoff rule asks (src/sessions/handoff.ts). */
    available,
    /** Outside the team hours, when they open next (for "the team is away until …"). */
    opensAt: async (workspaceId: string) => (await status(workspaceId)).opensAt,
  };
}

export type TeamStatusService = ReturnType<typeof createTeamAvailability>;
