/**
 * The Overview's first-day list (docs/analytics.md, "The first day"), read from the workspace's real state in one
 * statement: a name of its own, knowledge of any origin, a question tried, the chat on for a site, a colleague, and
 * somebody who said they are there. Nothing is ticked by hand.
 */
import { sql } from 'kysely';
import type { Db } from '../database.ts';

export interface FirstDayState {
  named: boolean;
  knowledge: boolean;
  tried: boolean;
  chat_on_site: boolean;
  colleague: boolean;
  availability: boolean;
}

export function firstDayRepository(db: Db) {
  return {
    /** @param placeholderName the name a first start gives a workspace nobody has named (src/bootstrap.ts). */
    async state(workspaceId: string, placeholderName: string): Promise<FirstDayState | undefined> {
      const row = await db
        .selectFrom('workspaces as w')
        .where('w.id', '=', workspaceId)
        .select((eb) => [
          eb('w.name', '<>', placeholderName).as('named'),
          eb('w.question_tried_at', 'is not', null).as('tried'),
          eb.exists(eb.selectFrom('knowledge_documents').select('id').where('workspace_id', '=', workspaceId)).as('knowledge'),
          eb.exists(eb.selectFrom('knowledge_sources').select('id').where('workspace_id', '=', workspaceId)).as('source'),
          eb
            .exists(
              eb
                .selectFrom('webchat_settings')
                .select('workspace_id')
                .where('workspace_id', '=', workspaceId)
                .where('enabled', '=', true)
                .where(sql<boolean>`jsonb_array_length(allowed_origins) > 0`),
            )
            .as('chat_on_site'),
          eb
            .exists(eb.selectFrom('users').select('id').where('workspace_id', '=', workspaceId).where('revoked_at', 'is', null).offset(1).limit(1))
            .as('colleague'),
          // Somebody said they are there: presence is offline until a person sets it (an "away" only follows "available").
          eb.exists(eb.selectFrom('team_presence').select('user_id').where('workspace_id', '=', workspaceId).where('status', 'in', ['available', 'away'])).as('availability'),
        ])
        .executeTakeFirst();
      if (!row) return undefined;
      return {
        named: Boolean(row.named),
        knowledge: Boolean(row.knowledge) || Boolean(row.source),
        tried: Boolean(row.tried),
        chat_on_site: Boolean(row.chat_on_site),
        colleague: Boolean(row.colleague),
        availability: Boolean(row.availability),
      };
    },

    /** Somebody tried a question: the first time is kept, later ones change nothing (and write nothing). */
    async questionTried(workspaceId: string): Promise<void> {
      await db.updateTable('workspaces').set({ question_tried_at: new Date() }).where('id', '=', workspaceId).where('question_tried_at', 'is', null).execute();
    },
  };
}

export type FirstDayRepository = ReturnType<typeof firstDayRepository>;
