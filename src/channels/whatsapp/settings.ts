/**
 * The workspace's WhatsApp settings (docs/interfaces.md: `PUT /v1/whatsapp {phone_number_id, access_token}`): which Meta
 * business number is this workspace's, and the Graph API token replies are sent with. The token is sealed at rest
 * (bound to `whatsapp-token:<workspace id>`, so it does not open on another row) and never appears in an answer; a
 * hint of its last characters does.
 */
import type { WhatsappRepository } from '../../../db/repositories/whatsapp.repository.ts';
import type { WhatsappAccount } from '../../../db/schema.ts';
import { keyHint } from '../../botlink/signing.ts';
import { AppError, notFound } from '../../errors.ts';
import type { SecretBox } from '../../secrets/secret-box.ts';
import { WHATSAPP_WEBHOOK_PATH } from './limits.ts';
import { whatsappTokenContext } from '../../secrets/contexts.ts';

export interface WhatsappSettingsView {
  phone_number_id: string;
  token_hint: string;
  /** The callback URL to enter in Meta's app dashboard (with the operator's WHATSAPP_VERIFY_TOKEN). */
  webhook_url: string;
  updated_at: string;
}

export interface WhatsappAccountCredentials {
  workspaceId: string;
  phoneNumberId: string;
  accessToken: string;
}

export function createWhatsappSettings(deps: { repository: WhatsappRepository; secrets: SecretBox; publicUrl: string; now?: () => Date }) {
  const { repository, secrets } = deps;
  const now = deps.now ?? (() => new Date());
  const view = (row: WhatsappAccount): WhatsappSettingsView => ({
    phone_number_id: row.phone_number_id,
    token_hint: row.token_hint,
    webhook_url: `${deps.publicUrl}${WHATSAPP_WEBHOOK_PATH}`,
    updated_at: new Date(row.updated_at).toISOString(),
  });

  return {
    async get(workspaceId: string): Promise<WhatsappSettingsView> {
      const row = await repository.findAccount(workspaceId);
      if (!row) throw notFound('The WhatsApp settings');
      return view(row);
    },

    async put(workspaceId: string, input: { phone_number_id: string; access_token: string }): Promise<WhatsappSettingsView> {
      const row = await repository.upsertAccount({
        workspace_id: workspaceId,
        phone_number_id: input.phone_number_id,
        access_token_sealed: secrets.seal(input.access_token, whatsappTokenContext(workspaceId)),
        token_hint: keyHint(input.access_token),
        updated_at: now(),
      });
      // One business number belongs to one workspace, or an incoming message would have two owners.
      if (row === 'taken') {
        throw new AppError('conflict', 'This phone_number_id is already connected to another workspace.', [{ field: 'phone_number_id', message: 'already in use' }]);
      }
      return view(row);
    },

    async remove(workspaceId: string): Promise<void> {
      if (!(await repository.removeAccount(workspaceId))) throw notFound('The WhatsApp settings');
    },

    /** The workspace that owns a business number; undefined for a number nobody connected. */
    async workspaceFor(phoneNumberId: string): Promise<string | undefined> {
      return (await repository.findAccountByPhoneNumberId(phoneNumberId))?.workspace_id;
    },

    /** The workspace's current token (replies are sent with the token of the moment, not the one of the message). */
    async credentials(workspaceId: string): Promise<WhatsappAccountCredentials | undefined> {
      const row = await repository.findAccount(workspaceId);
      return row && { workspaceId, phoneNumberId: row.phone_number_id, accessToken: secrets.open(row.access_token_sealed, whatsappTokenContext(workspaceId)) };
    },
  };
}

export type WhatsappSettings = ReturnType<typeof createWhatsappSettings>;
