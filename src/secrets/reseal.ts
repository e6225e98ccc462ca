/**
 * The second half of a master-key rotation (docs/operations.md, "Rotating secrets"): every stored secret that opens
 * only with MASTER_KEY_PREVIOUS is sealed again under MASTER_KEY. Safe to run while the service runs (each row is
 * rewritten on its own, guarded by the value it read) and to run again (what is current is left alone).
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { integrationKeyContext, webhookSecretContext, whatsappTokenContext } from './contexts.ts';
import type { SecretBox } from './secret-box.ts';

export interface ResealReport {
  /** Rewritten under the current key. */
  resealed: number;
  /** Already sealed under the current key. */
  current: number;
  /** Opened with no key given: `table.column` and the row's id (never the value). */
  unreadable: string[];
}

interface SealedColumn {
  table: 'integrations' | 'whatsapp_accounts' | 'webhook_endpoints';
  id: 'workspace_id' | 'id';
  column: 'key_sealed' | 'access_token_sealed' | 'secret_sealed' | 'previous_secret_sealed';
  context: (id: string) => string;
}

const COLUMNS: readonly SealedColumn[] = [
  { table: 'integrations', id: 'workspace_id', column: 'key_sealed', context: integrationKeyContext },
  { table: 'whatsapp_accounts', id: 'workspace_id', column: 'access_token_sealed', context: whatsappTokenContext },
  { table: 'webhook_endpoints', id: 'id', column: 'secret_sealed', context: webhookSecretContext },
  { table: 'webhook_endpoints', id: 'id', column: 'previous_secret_sealed', context: webhookSecretContext },
];

export async function resealAll(db: Db, secrets: SecretBox): Promise<ResealReport> {
  const report: ResealReport = { resealed: 0, current: 0, unreadable: [] };
  for (const c of COLUMNS) {
    const { rows } = await sql<{ id: string; sealed: string | null }>`
      select ${sql.ref(c.id)}::text as id, ${sql.ref(c.column)} as sealed from ${sql.table(c.table)}
    `.execute(db);
    for (const row of rows) {
      if (row.sealed === null) continue;
      const context = c.context(row.id);
      if (secrets.isCurrent(row.sealed, context)) {
        report.current += 1;
        continue;
      }
      let plain: string;
      try {
        plain = secrets.open(row.sealed, context);
      } catch {
        report.unreadable.push(`${c.table}.${c.column} ${row.id}`);
        continue;
      }
      // Only if nobody changed it meanwhile (a new key saved through the service is already current).
      const updated = await sql`
        update ${sql.table(c.table)} set ${sql.ref(c.column)} = ${secrets.seal(plain, context)}
        where ${sql.ref(c.id)}::text = ${row.id} and ${sql.ref(c.column)} = ${row.sealed}
      `.execute(db);
      if (Number(updated.numAffectedRows ?? 0) > 0) report.resealed += 1;
    }
  }
  return report;
}
