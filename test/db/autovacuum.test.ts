/**
 * A PostgreSQL without autovacuum never analyzes a table, so plans made while it was small stay as it grows
 * (docs/operations.md, "Autovacuum"): the engine says so once at start, as a warning.
 */
import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { autovacuumOff } from '../../db/database.ts';
import { createLogger } from '../../src/log.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { startTestService } from '../helpers/service.ts';

describeEachDatabase('autovacuum', (get) => {
  it("is read from the server's own setting, and warned about at start when off", async () => {
    const database = get();
    const setting = database.kind === 'postgres' ? (await sql<{ autovacuum: string }>`show autovacuum`.execute(database.db)).rows[0]!.autovacuum : null;
    const off = await autovacuumOff({ db: database.db, kind: database.kind, close: async () => {} });
    expect(off).toBe(setting === 'off');

    const warnings: string[] = [];
    const logger = createLogger('warn', { write: (line: string) => void warnings.push((JSON.parse(line) as { msg: string }).msg) });
    const service = await startTestService(database, {}, { logger });
    await service.stop();
    expect(warnings.filter((w) => w.startsWith('PostgreSQL runs with autovacuum off'))).toHaveLength(off ? 1 : 0);
  });
});
