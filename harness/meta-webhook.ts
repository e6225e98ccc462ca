/**
 * A WhatsApp customer's text message as Meta's webhook carries it (`whatsapp_business_account`, one entry, one
 * `messages` change): the inbox benchmark's and the soak's customers, and the WhatsApp payload property test's. The
 * caller serialises it (JSON.stringify, or escaped the way Meta writes) and signs those bytes with `signWebhookBody`
 * (src/channels/whatsapp/signature.ts), as Meta signs them (`X-Hub-Signature-256`).
 */
export interface MetaTextMessage {
  phoneNumberId: string;
  waId: string;
  messageId: string;
  text: string;
  name?: string;
  /** Unix seconds as a string, as Meta writes it (now when left out); a property test puts anything here. */
  timestamp?: unknown;
  /** More fields of the change's value, beside the message (a `statuses` list, say). */
  more?: Record<string, unknown>;
}

export function metaTextMessage(m: MetaTextMessage): Record<string, unknown> {
  const timestamp = 'timestamp' in m ? m.timestamp : String(Math.floor(Date.now() / 1000));
  return {
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
              messages: [{ from: m.waId, id: m.messageId, timestamp, type: 'text', text: { body: m.text } }],
              ...m.more,
            },
          },
        ],
      },
    ],
  };
}
