/** The phone channel's settings and numbers per workspace, and the inputs of team availability. */
import { sql } from 'kysely';
import type { Db } from '../database.ts';
import { jsonb } from '../json.ts';

export interface PhoneSettingsRecord {
  numbers: string[];
  transfer_number: string | null;
  team_hours: unknown;
  language: string;
  greeting: string | null;
  updated_at: Date | null;
}

export type SavePhoneResult = { ok: true } | { ok: false; taken: string[] };

export function phoneRepository(db: Db) {
  return {
    /**
     * The workspace answering `number` (E.164), if any. A disabled workspace answers none: its callers hear the
     * apology of an unknown number (docs/operations.md, "Operator commands").
     */
    async workspaceForNumber(number: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('phone_numbers')
        .innerJoin('workspaces', 'workspaces.id', 'phone_numbers.workspace_id')
        .select('phone_numbers.workspace_id')
        .where('phone_numbers.number', '=', number)
        .where('workspaces.disabled_at', 'is', null)
        .executeTakeFirst();
      return row?.workspace_id;
    },

    /** The workspace's settings; undefined when it never saved any. */
    async settings(workspaceId: string): Promise<PhoneSettingsRecord | undefined> {
      const row = await db.selectFrom('phone_settings').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirst();
      const numbers = await db.selectFrom('phone_numbers').select('number').where('workspace_id', '=', workspaceId).orderBy('number').execute();
      if (!row && numbers.length === 0) return undefined;
      return {
        numbers: numbers.map((n) => n.number),
        transfer_number: row?.transfer_number ?? null,
        team_hours: row?.team_hours ?? null,
        language: row?.language ?? 'en-US',
        greeting: row?.greeting ?? null,
        updated_at: row ? new Date(row.updated_at) : null,
      };
    },

    /**
     * Replaces the workspace's numbers and settings in one transaction. A number another workspace answers is not
     * taken over: nothing is changed and the taken numbers are returned. The primary key on the number decides a race
     * between two workspaces claiming it at once.
     */
    async save(
      workspaceId: string,
      input: { numbers: string[]; transfer_number: string | null; team_hours: unknown; language: string; greeting: string | null },
    ): Promise<SavePhoneResult> {
      return db.transaction().execute(async (trx) => {
        if (input.numbers.length > 0) {
          const taken = await trx.selectFrom('phone_numbers').select('number').where('number', 'in', input.numbers).where('workspace_id', '<>', workspaceId).execute();
          if (taken.length > 0) return { ok: false, taken: taken.map((t) => t.number).sort() };
        }
        let remove = trx.deleteFrom('phone_numbers').where('workspace_id', '=', workspaceId);
        if (input.numbers.length > 0) remove = remove.where('number', 'not in', input.numbers);
        await remove.execute();
        if (input.numbers.length > 0) {
          await trx
            .insertInto('phone_numbers')
            .values(input.numbers.map((number) => ({ number, workspace_id: workspaceId })))
            .onConflict((oc) => oc.column('number').doNothing())
            .execute();
          // Another workspace may have inserted one of them since the check above: then give up as a whole.
          const owned = await trx.selectFrom('phone_numbers').select('number').where('number', 'in', input.numbers).where('workspace_id', '=', workspaceId).execute();
          if (owned.length !== input.numbers.length) {
            const mine = new Set(owned.map((o) => o.number));
            throw new NumbersTaken(input.numbers.filter((n) => !mine.has(n)));
          }
        }
        const values = {
          transfer_number: input.transfer_number,
          team_hours: jsonb(input.team_hours ?? null),
          language: input.language,
          greeting: input.greeting,
          updated_at: sql<Date>`now()`,
        };
        await trx
          .insertInto('phone_settings')
          .values({ workspace_id: workspaceId, ...values })
          .onConflict((oc) => oc.column('workspace_id').doUpdateSet(values))
          .execute();
        return { ok: true } as const;
      }).catch((err: unknown) => {
        if (err instanceof NumbersTaken) return { ok: false, taken: err.numbers } as const;
        throw err;
      });
    },

    /** The manual team switch and the team hours, in one read: what team availability is computed from. */
    async teamState(workspaceId: string): Promise<{ switchOn: boolean; teamHours: unknown } | undefined> {
      const row = await db
        .selectFrom('workspaces')
        .leftJoin('phone_settings', 'phone_settings.workspace_id', 'workspaces.id')
        .select(['workspaces.team_available', 'phone_settings.team_hours'])
        .where('workspaces.id', '=', workspaceId)
        .executeTakeFirst();
      return row && { switchOn: row.team_available, teamHours: row.team_hours ?? null };
    },
  };
}

class NumbersTaken extends Error {
  readonly numbers: string[];
  constructor(numbers: string[]) {
    super('phone numbers taken by another workspace');
    this.numbers = numbers;
  }
}

export type PhoneRepository = ReturnType<typeof phoneRepository>;
