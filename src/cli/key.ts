/** `key sync | widget`: the sync API's keys, as POST /v1/keys/sync and GET /v1/keys/widget. */
import { print, withServices, workspaceOption, type CliCommand } from './context.ts';

export const keyCommands: CliCommand[] = [
  {
    name: 'key sync',
    usage: 'key sync --workspace <id> [--json]   a new secret sync key, shown once; the previous one stops working',
    async run(values) {
      const workspace = workspaceOption(values);
      const made = await withServices(async ({ accounts, apiKeys }) => {
        await accounts.operatorOf(workspace);
        return apiKeys.rotateSyncKey(workspace);
      });
      print(values, made, () => ['A new sync key (X-Sync-Key); shown this once, the previous one no longer works:', `  ${made.key}`]);
      return 0;
    },
  },
  {
    name: 'key widget',
    usage: 'key widget --workspace <id> [--json]   the public, read-only widget key (made on first read)',
    async run(values) {
      const workspace = workspaceOption(values);
      const widget = await withServices(async ({ accounts, apiKeys }) => {
        await accounts.operatorOf(workspace);
        return apiKeys.widgetKey(workspace);
      });
      print(values, widget, () => [`The widget key (X-Widget-Key): ${widget.key}`]);
      return 0;
    },
  },
];
