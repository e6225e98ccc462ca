/**
 * A workspace's run of background work, one engine at a time, claimed in `job_claims` under `<prefix><workspace id>`:
 * an UPDATE while the claim has run out, renewed while the run goes on, given back with the run's watermark
 * (`last_run_at`) when it got through, or held until a retry time when it did not. The AI's questions
 * (knowledge-phrasings-jobs.repository.ts) and the embeddings (knowledge-embeddings.repository.ts) claim this way.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';

export interface WorkspaceJobClaims {
  /** Claims the workspace's run for `engine` until `until`; false when another engine holds it (or it waits to retry). */
  claim(workspaceId: string, engine: string, at: Date, until: Date): Promise<boolean>;
  /** Renews the claim while the run goes on; false when it is no longer this engine's. */
  renew(workspaceId: string, engine: string, until: Date): Promise<boolean>;
  /** The run is done: its watermark kept, the claim given back. */
  finish(workspaceId: string, engine: string, watermark: Date | null): Promise<void>;
  /**
   * The run did not get through (the model failed, or the engine stops): the watermark left as it was, the claim held
   * until `until` (the retry time; null gives it back at once).
   */
  postpone(workspaceId: string, engine: string, until: Date | null): Promise<void>;
}

export function workspaceJobClaims(db: Db, prefix: string): WorkspaceJobClaims {
  const jobName = (workspaceId: string) => `${prefix}${workspaceId}`;
  return {
    async claim(workspaceId, engine, at, until) {
      await db.insertInto('job_claims').values({ name: jobName(workspaceId) }).onConflict((oc) => oc.column('name').doNothing()).execute();
      const claimed = await db
        .updateTable('job_claims')
        .set({ lease_owner: engine, lease_until: until })
        .where('name', '=', jobName(workspaceId))
        .where('lease_until', '<=', at)
        .returning('name')
        .execute();
      return claimed.length === 1;
    },

    async renew(workspaceId, engine, until) {
      const renewed = await db
        .updateTable('job_claims')
        .set({ lease_until: until })
        .where('name', '=', jobName(workspaceId))
        .where('lease_owner', '=', engine)
        .returning('name')
        .execute();
      return renewed.length === 1;
    },

    async finish(workspaceId, engine, watermark) {
      await db
        .updateTable('job_claims')
        .set({ lease_owner: null, lease_until: sql`'epoch'::timestamptz`, last_run_at: watermark })
        .where('name', '=', jobName(workspaceId))
        .where('lease_owner', '=', engine)
        .execute();
    },

    async postpone(workspaceId, engine, until) {
      await db
        .updateTable('job_claims')
        .set({ lease_owner: null, lease_until: until ?? sql`'epoch'::timestamptz` })
        .where('name', '=', jobName(workspaceId))
        .where('lease_owner', '=', engine)
        .execute();
    },
  };
}
