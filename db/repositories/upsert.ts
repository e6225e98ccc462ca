/** Settings kept as one row per workspace (the bot-link integration, the WhatsApp account): written whole. */
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database.ts';
import type { Database } from '../schema.ts';

type PerWorkspaceTable = 'integrations' | 'whatsapp_accounts';

/**
 * Inserts the workspace's row, or overwrites every other column of the one it has; returns the row. Any other
 * unique violation (a WhatsApp number another workspace has) is thrown for the caller's repository to name.
 */
export async function upsertPerWorkspace<T extends PerWorkspaceTable>(
  db: Db,
  table: T,
  row: Insertable<Database[T]> & { workspace_id: string },
): Promise<Selectable<Database[T]>> {
  const { workspace_id: _workspace, ...rest } = row;
  // Kysely cannot follow a table named by a type parameter; the row's type is checked at the call.
  const values = row as Insertable<Database[PerWorkspaceTable]>;
  const updates = rest as Partial<Insertable<Database[PerWorkspaceTable]>>;
  const written = await db
    .insertInto(table as PerWorkspaceTable)
    .values(values)
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(updates))
    .returningAll()
    .executeTakeFirstOrThrow();
  return written as Selectable<Database[T]>;
}
