/** Outgoing webhooks' settings: the endpoints, one per workspace and event, with their sealed secrets. */
import type { Db } from '../database.ts';
import type { WebhookEndpoint, WebhookEndpointsTable, WebhookSubscribableEvent } from '../schema.ts';

export function webhookEndpointQueries(db: Db) {
  return {
    async listEndpoints(workspaceId: string): Promise<WebhookEndpoint[]> {
      return db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).orderBy('event').execute();
    },

    async findEndpoint(workspaceId: string, event: WebhookSubscribableEvent): Promise<WebhookEndpoint | undefined> {
      return db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('event', '=', event).executeTakeFirst();
    },

    /** Inserts the endpoint unless one exists for the event; undefined when it did (a concurrent PUT won). */
    async createEndpoint(
      row: Pick<WebhookEndpointsTable, 'id' | 'workspace_id' | 'event' | 'url' | 'secret_sealed' | 'secret_hint'> & { now: Date },
    ): Promise<WebhookEndpoint | undefined> {
      const { now, ...values } = row;
      return db
        .insertInto('webhook_endpoints')
        .values({ ...values, created_at: now, updated_at: now })
        .onConflict((oc) => oc.columns(['workspace_id', 'event']).doNothing())
        .returningAll()
        .executeTakeFirst();
    },

    /** A new URL; saving it is also how an owner re-enables a disabled endpoint (the failure count starts over). */
    async updateEndpointUrl(workspaceId: string, event: WebhookSubscribableEvent, url: string, now: Date): Promise<WebhookEndpoint | undefined> {
      return db
        .updateTable('webhook_endpoints')
        .set({ url, disabled_at: null, disabled_reason: null, failing_since: null, updated_at: now })
        .where('workspace_id', '=', workspaceId)
        .where('event', '=', event)
        .returningAll()
        .executeTakeFirst();
    },

    /** The current secret becomes the previous one (signing until `previousUntil`); the new one takes its place. */
    async rotateSecret(
      workspaceId: string,
      event: WebhookSubscribableEvent,
      input: { sealed: (endpointId: string) => string; hint: string; previousUntil: Date; now: Date },
    ): Promise<WebhookEndpoint | undefined> {
      return db.transaction().execute(async (trx) => {
        const current = await trx.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', workspaceId).where('event', '=', event).forUpdate().executeTakeFirst();
        if (!current) return undefined;
        return trx
          .updateTable('webhook_endpoints')
          .set((eb) => ({
            previous_secret_sealed: eb.ref('secret_sealed'),
            previous_secret_expires_at: input.previousUntil,
            secret_sealed: input.sealed(current.id),
            secret_hint: input.hint,
            updated_at: input.now,
          }))
          .where('id', '=', current.id)
          .returningAll()
          .executeTakeFirst();
      });
    },

    /** Deletes the endpoint; its waiting deliveries are cancelled (the log keeps them, without the endpoint). */
    async deleteEndpoint(workspaceId: string, event: WebhookSubscribableEvent, now: Date): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const endpoint = await trx.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', workspaceId).where('event', '=', event).forUpdate().executeTakeFirst();
        if (!endpoint) return false;
        await trx
          .updateTable('webhook_deliveries')
          .set({ status: 'cancelled', last_error: 'The endpoint was deleted.', completed_at: now, updated_at: now, lease_owner: null, lease_until: null })
          .where('endpoint_id', '=', endpoint.id)
          .where('status', '=', 'pending')
          // One in flight keeps its lease: its outcome is still written, and a retry it would need is cancelled then.
          .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
          .execute();
        await trx.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
        return true;
      });
    },
  };
}
