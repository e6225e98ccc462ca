import { describe, expect, it } from 'vitest';
import { createTeamAvailability } from '../../../src/channels/phone/team-availability.ts';
import { teamHoursProblems, wallClock, withinTeamHours, type TeamHours } from '../../../src/channels/phone/team-hours.ts';

describe('team hours', () => {
  const hours: TeamHours = { time_zone: 'Europe/Amsterdam', week: { mon: [['09:00', '17:30']], sat: [['10:00', '14:00']], sun: [['22:00', '24:00']] } };

  it('are read on the wall clock of their time zone, daylight saving time included', () => {
    // Winter (CET, UTC+1): 08:30 UTC is 09:30 in Amsterdam.
    expect(wallClock(new Date('2026-03-02T08:30:00Z'), 'Europe/Amsterdam')).toEqual({ day: 'mon', minute: 9 * 60 + 30 });
    expect(withinTeamHours(hours, new Date('2026-03-02T07:59:00Z'))).toBe(false); // 08:59
    expect(withinTeamHours(hours, new Date('2026-03-02T08:00:00Z'))).toBe(true); // 09:00
    expect(withinTeamHours(hours, new Date('2026-03-02T16:29:00Z'))).toBe(true); // 17:29
    expect(withinTeamHours(hours, new Date('2026-03-02T16:30:00Z'))).toBe(false); // 17:30: the end is not included
    // Summer (CEST, UTC+2): 15:15 UTC is 17:15, 15:45 UTC is 17:45.
    expect(withinTeamHours(hours, new Date('2026-06-01T15:15:00Z'))).toBe(true);
    expect(withinTeamHours(hours, new Date('2026-06-01T15:45:00Z'))).toBe(false);
    // A closed day, and a range up to midnight.
    expect(withinTeamHours(hours, new Date('2026-03-03T10:00:00Z'))).toBe(false); // Tuesday
    expect(withinTeamHours(hours, new Date('2026-03-01T22:59:00Z'))).toBe(true); // Sunday 23:59
    expect(withinTeamHours(hours, new Date('2026-03-01T23:00:00Z'))).toBe(false); // Monday 00:00
  });

  it('the same instant is inside or outside depending on the zone', () => {
    const at = new Date('2026-03-02T15:00:00Z'); // Monday 16:00 in Amsterdam, 10:00 in New York, 00:00 Tuesday in Tokyo
    expect(withinTeamHours({ ...hours, time_zone: 'America/New_York' }, at)).toBe(true);
    expect(withinTeamHours({ ...hours, time_zone: 'Asia/Tokyo' }, at)).toBe(false);
  });

  it('refuse unknown zones, impossible times and ranges that end before they start', () => {
    expect(teamHoursProblems(hours)).toEqual([]);
    expect(teamHoursProblems({ time_zone: 'Mars/Olympus', week: {} })[0]).toMatchObject({ field: 'team_hours.time_zone' });
    expect(teamHoursProblems({ time_zone: '+01:00', week: {} })[0]).toMatchObject({ field: 'team_hours.time_zone' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { tue: [['25:00', '26:00']] } })[0]).toMatchObject({ field: 'team_hours.week.tue.0.0' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { tue: [['09:60', '10:00']] } })[0]).toMatchObject({ field: 'team_hours.week.tue.0.0' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { wed: [['18:00', '09:00']] } })[0]).toMatchObject({ field: 'team_hours.week.wed.0' });
    expect(teamHoursProblems({ time_zone: 'UTC', week: { wed: [['24:00', '24:00']] } })).toHaveLength(1);
  });

  it('availability: someone of the team available and, when set, inside the hours; outside them, when they open next', async () => {
    let teamHours: unknown = null;
    let anyone = true;
    let now = Date.parse('2026-03-02T08:30:00Z');
    const team = createTeamAvailability({ phone: { teamState: async () => ({ switchOn: false, teamHours }) }, presence: { anyAvailable: async () => anyone }, idleMinutes: 5, now: () => now });
    expect(await team.available('w')).toBe(true); // someone available, no hours
    teamHours = hours;
    expect(await team.status('w')).toEqual({ available: true, opensAt: null }); // Monday 09:30
    now = Date.parse('2026-03-02T17:00:00Z');
    // Monday 18:00: closed until Saturday 10:00, however many are available.
    expect(await team.status('w')).toEqual({ available: false, opensAt: { day: 'sat', time: '10:00', today: false } });
    now = Date.parse('2026-03-02T07:00:00Z'); // Monday 08:00: opens today
    expect(await team.opensAt('w')).toEqual({ day: 'mon', time: '09:00', today: true });
    now = Date.parse('2026-03-02T08:30:00Z');
    anyone = false;
    expect(await team.available('w')).toBe(false); // inside the hours, nobody available
  });
});
