/**
 * Failed sign-ins counted per key, and the addresses users signed in from (migration 0020), shared by every engine.
 * The policy (thresholds, waits, what is counted) is src/auth/login-throttle.ts's; this holds the rows and their locks.
 */
import type { Db } from '../database.ts';

export interface FailureCount {
  key: string;
  failures: number;
  lastAt: Date;
  /** Attempts are refused until then; null: none refused. */
  blockedUntil: Date | null;
}

export function signInThrottleRepository(db: Db) {
  return {
    /**
     * Runs `decide` on the counts of `keys` under their row locks, writes back the counts it returns, and answers its
     * result, in one transaction: parallel attempts on any engine see each other's counts. A key without a row starts
     * at zero (the row is made first, so that it can be locked too). Keys are locked in one order, so two attempts
     * sharing keys wait for each other instead of deadlocking.
     */
    async withCounts<T>(keys: readonly string[], at: Date, decide: (counts: Map<string, FailureCount>) => { write: FailureCount[]; result: T }): Promise<T> {
      const sorted = [...new Set(keys)].sort();
      return db.transaction().execute(async (trx) => {
        await trx
          .insertInto('sign_in_failures')
          .values(sorted.map((key) => ({ key, failures: 0, last_at: at, blocked_until: null })))
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
        const rows = await trx.selectFrom('sign_in_failures').selectAll().where('key', 'in', sorted).orderBy('key').forUpdate().execute();
        const counts = new Map(
          rows.map((r) => {
            const blockedUntil = r.blocked_until === null ? null : new Date(r.blocked_until);
            return [r.key, { key: r.key, failures: r.failures, lastAt: new Date(r.last_at), blockedUntil }];
          }),
        );
        const { write, result } = decide(counts);
        for (const c of write) {
          await trx.updateTable('sign_in_failures').set({ failures: c.failures, last_at: c.lastAt, blocked_until: c.blockedUntil }).where('key', '=', c.key).execute();
        }
        return result;
      });
    },

    /** Of these users, the ones who signed in from `address` since `since`. */
    async knownAt(userIds: readonly string[], address: string, since: Date): Promise<Set<string>> {
      if (userIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('sign_in_addresses')
        .select('user_id')
        .where('user_id', 'in', [...userIds])
        .where('address', '=', address)
        .where('succeeded_at', '>', since)
        .execute();
      return new Set(rows.map((r) => r.user_id));
    },

    /** These users signed in from `address` at `at`. */
    async recordSuccess(userIds: readonly string[], address: string, at: Date): Promise<void> {
      if (userIds.length === 0) return;
      await db
        .insertInto('sign_in_addresses')
        .values(userIds.map((user_id) => ({ user_id, address, succeeded_at: at })))
        .onConflict((oc) => oc.columns(['user_id', 'address']).doUpdateSet({ succeeded_at: at }))
        .execute();
    },

    /** Forgets counts last touched before `countsBefore` that refuse nothing any more, and successes before `addressesBefore`. */
    async sweep(at: Date, countsBefore: Date, addressesBefore: Date): Promise<void> {
      await db
        .deleteFrom('sign_in_failures')
        .where('last_at', '<', countsBefore)
        .where((eb) => eb.or([eb('blocked_until', 'is', null), eb('blocked_until', '<', at)]))
        .execute();
      await db.deleteFrom('sign_in_addresses').where('succeeded_at', '<', addressesBefore).execute();
    },
  };
}

export type SignInThrottleRepository = ReturnType<typeof signInThrottleRepository>;
