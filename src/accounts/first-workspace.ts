/**
 * The names a first start gives the workspace and its owner when nobody said (README, Settings:
 * BOTLINK_WORKSPACE_NAME, BOTLINK_OWNER_EMAIL); the Overview's first-day list counts a workspace still called this
 * as not named yet.
 */
export const FIRST_WORKSPACE = { name: 'My workspace', ownerEmail: 'owner@example.com' } as const;
