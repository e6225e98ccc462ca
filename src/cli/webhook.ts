/** `webhook list | set | remove`: a workspace's webhook endpoints, as GET, PUT and DELETE /v1/webhooks/{event}. */
import { subscribableEvents } from '../webhooks/events.ts';
import type { EndpointView } from '../webhooks/webhook-service.ts';
import { print, table, UsageError, withServices, workspaceOption, type CliCommand, type CliOptions } from './context.ts';

function eventOption(values: CliOptions): string {
  const event = values.event?.trim();
  if (!event) throw new UsageError(`--event is required: one of ${subscribableEvents.join(', ')}.`);
  return event;
}

const state = (w: EndpointView) => (w.enabled ? 'enabled' : `disabled: ${w.disabled_reason ?? 'by the owner'}`);

export const webhookCommands: CliCommand[] = [
  {
    name: 'webhook list',
    usage: 'webhook list --workspace <id> [--json]   the URL of each event, its secret hint and state',
    async run(values) {
      const workspace = workspaceOption(values);
      const webhooks = await withServices(async ({ accounts, webhooks: service }) => {
        await accounts.operatorOf(workspace);
        return service.list(workspace);
      });
      print(values, { webhooks }, () =>
        webhooks.length === 0
          ? ['No webhooks set (webhook set).']
          : table(['EVENT', 'URL', 'SECRET', 'STATE'], webhooks.map((w) => [w.event, w.url, w.secret_hint, state(w)])),
      );
      return 0;
    },
  },
  {
    name: 'webhook set',
    usage: `webhook set --workspace <id> --event ${subscribableEvents.join('|')} --url <https url> [--json]\n      the URL of that event; the whsec_ secret is shown once, the first time`,
    async run(values) {
      const workspace = workspaceOption(values);
      const event = eventOption(values);
      const url = values.url?.trim();
      if (!url) throw new UsageError('--url is required: the https URL that receives the event.');
      const saved = await withServices(async ({ accounts, webhooks: service }) => {
        await accounts.operatorOf(workspace);
        return service.put(workspace, event, { url });
      });
      print(values, saved, () => [
        `${saved.event} → ${saved.url} (${state(saved)}).`,
        saved.secret ? `The signing secret, shown this once: ${saved.secret}` : `The signing secret is unchanged (${saved.secret_hint}).`,
      ]);
      return 0;
    },
  },
  {
    name: 'webhook remove',
    usage: 'webhook remove --workspace <id> --event <event> [--json]   no more deliveries for that event',
    async run(values) {
      const workspace = workspaceOption(values);
      const event = eventOption(values);
      await withServices(async ({ accounts, webhooks: service }) => {
        await accounts.operatorOf(workspace);
        await service.remove(workspace, event);
      });
      print(values, { removed: event }, () => [`Removed the webhook for ${event}.`]);
      return 0;
    },
  },
];
