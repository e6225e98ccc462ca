/** The workspaces as the operator sees them: counted, found, listed with their owners, disabled or enabled. */
import type { Db } from '../database.ts';
import type { Workspace } from '../schema.ts';

/** A workspace as the operator lists it (`cli workspace list`). */
export interface WorkspaceSummary {
  id: string;
  name: string;
  created_at: Date;
  /** The live owners' emails. */
  owners: string[];
  /** Live users of every role. */
  users: number;
  disabled_at: Date | null;
  disabled_reason: string | null;
}

/** The operator's statements on workspaces (`cli workspace ...`). */
export function accountWorkspacesRepository(db: Db) {
  return {
    async countWorkspaces(): Promise<number> {
      const row = await db.selectFrom('workspaces').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async findWorkspace(workspaceId: string): Promise<Workspace | undefined> {
      return db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
    },

    /** Every workspace, oldest first, with its owners and the number of its users. */
    async listWorkspaces(): Promise<WorkspaceSummary[]> {
      const workspaces = await db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').execute();
      const users = await db.selectFrom('users').select(['workspace_id', 'email', 'role']).where('revoked_at', 'is', null).orderBy('created_at').execute();
      return workspaces.map((w) => {
        const mine = users.filter((u) => u.workspace_id === w.id);
        return {
          id: w.id,
          name: w.name,
          created_at: new Date(w.created_at),
          owners: mine.filter((u) => u.role === 'owner').map((u) => u.email),
          users: mine.length,
          disabled_at: w.disabled_at === null ? null : new Date(w.disabled_at),
          disabled_reason: w.disabled_reason,
        };
      });
    },

    /** Disables (`at` set) or enables (`at` null) a workspace; false when there is no such workspace. */
    async setWorkspaceDisabled(workspaceId: string, at: Date | null, reason: string | null): Promise<boolean> {
      const result = await db.updateTable('workspaces').set({ disabled_at: at, disabled_reason: reason }).where('id', '=', workspaceId).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
}
