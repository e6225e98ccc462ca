/**
 * Whether the team can take a call now (protocol §2.2 "on the phone only when the team is available"):
 * the manual switch (PUT /v1/team) is on AND either no team hours are set or now lies inside them in their time zone.
 * The switch stays the master: hours never make a team available that switched itself off.
 */
import type { PhoneRepository } from '../../../db/repositories/phone.repository.ts';
import { withinTeamHours, type TeamHours } from './team-hours.ts';

export type TeamAvailability = (workspaceId: string) => Promise<boolean>;

export function createTeamAvailability(deps: { phone: Pick<PhoneRepository, 'teamState'>; now?: () => number }): TeamAvailability {
  const now = deps.now ?? Date.now;
  return async (workspaceId) => {
    const state = await deps.phone.teamState(workspaceId);
    if (!state?.switchOn) return false;
    const hours = state.teamHours as TeamHours | null;
    return hours == null || withinTeamHours(hours, new Date(now()));
  };
}
