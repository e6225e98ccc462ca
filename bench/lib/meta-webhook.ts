/**
 * A WhatsApp customer's text message as Meta's webhook carries it (compact JSON, `whatsapp_business_account`), signed
 * with the app secret the way Meta signs it (`X-Hub-Signature-256`): the inbox benchmark's and the soak's customers.
 */
import { signWebhookBody } from '../../src/channels/whatsapp/signature.ts';

export function metaTextMessage(m: { phoneNumberId: string; waId: string; messageId: string; text: string; name?: string }): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: m.phoneNumberId },
              contacts: [{ profile: { name: m.name ?? 'Customer' }, wa_id: m.waId }],
              messages: [{ from: m.waId, id: m.messageId, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: m.text } }],
            },
          },
        ],
      },
    ],
  });
}

/** `X-Hub-Signature-256` of a body, as Meta computes it. */
export function metaSignature(appSecret: string, body: string): string {
  return signWebhookBody(appSecret, Buffer.from(body, 'utf8'));
}
