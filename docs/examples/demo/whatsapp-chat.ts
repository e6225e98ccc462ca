/**
 * A WhatsApp conversation: the customer's messages arrive as Meta's Cloud API webhooks, signed as Meta signs them
 * (`X-Hub-Signature-256`, HMAC-SHA256 of the raw body with the app secret), and Botlink's replies go out to the Graph
 * API, which the demo replaces with a local recorder (WHATSAPP_GRAPH_URL). docs/whatsapp.md.
 */
import { createHmac } from 'node:crypto';
import { sendJson, startLoopbackServer, type LoopbackServer } from './loopback.ts';
import type { Transcript } from './transcript.ts';

/** One send-message call Botlink made to the Graph API. */
export interface GraphSend {
  path: string;
  body: { to?: string; type?: string; text?: { body?: string } };
}

export interface GraphRecorder extends LoopbackServer {
  /** The WHATSAPP_GRAPH_URL to give Botlink. */
  graphUrl: string;
  sends: GraphSend[];
  /** The next text message sent to `to`, after the `seen` sends already read. */
  nextText(to: string, seen: number, timeoutMs?: number): Promise<{ text: string; index: number }>;
}

/** Meta's Graph API, as far as Botlink uses it: `POST /{phone_number_id}/messages` answers a message id. */
export async function startGraphRecorder(): Promise<GraphRecorder> {
  const sends: GraphSend[] = [];
  const server = await startLoopbackServer((req, res, body) => {
    if (req.method !== 'POST' || !/\/messages$/.test(req.url ?? '')) return sendJson(res, 404, { error: { message: 'Unknown path', code: 100 } });
    const parsed = JSON.parse(body.toString('utf8')) as GraphSend['body'];
    sends.push({ path: req.url ?? '', body: parsed });
    sendJson(res, 200, { messaging_product: 'whatsapp', contacts: [{ input: parsed.to, wa_id: parsed.to }], messages: [{ id: `wamid.DEMO${String(sends.length).padStart(6, '0')}` }] });
  });
  return {
    ...server,
    graphUrl: `${server.origin}/v21.0`,
    sends,
    async nextText(to, seen, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const index = sends.findIndex((s, i) => i >= seen && s.body.to === to && s.body.type === 'text');
        if (index >= 0) return { text: String(sends[index]!.body.text?.body ?? ''), index };
        if (Date.now() > deadline) throw new Error(`no WhatsApp reply to ${to} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

export interface WhatsappChatSettings {
  serviceUrl: string;
  appSecret: string;
  phoneNumberId: string;
  graph: GraphRecorder;
  quick: boolean;
}

/** Meta's webhook body for one text message (the shape of test/channels/whatsapp/fixtures/text-message.json). */
function metaPayload(phoneNumberId: string, waId: string, name: string, messageId: string, text: string): Buffer {
  const payload = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name }, wa_id: waId }],
              messages: [{ from: waId, id: messageId, timestamp: String(Math.floor(Date.now() / 1000)), text: { body: text }, type: 'text' }],
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
  // Meta writes compact JSON with non-ASCII as \uXXXX; the signature covers exactly these bytes.
  return Buffer.from(JSON.stringify(payload).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`), 'utf8');
}

export async function playWhatsappChat(transcript: Transcript, settings: WhatsappChatSettings): Promise<{ answered: boolean }> {
  const waId = '31687654321';
  let seen = settings.graph.sends.length;
  let answered = false;
  let id: string | undefined;
  const messages = settings.quick ? ['Hi! Is my order 1002 on its way? Postcode 1012 JS.'] : ['Hi! Is my order 1002 on its way? Postcode 1012 JS.', 'Do you also ship to Belgium?'];
  for (const [i, text] of messages.entries()) {
    const body = metaPayload(settings.phoneNumberId, waId, 'Daan de Vries', `wamid.DEMOIN${Date.now()}${i}`, text);
    const signature = `sha256=${createHmac('sha256', settings.appSecret).update(body).digest('hex')}`;
    transcript.customer('whatsapp', text, ` +${waId}`);
    const res = await fetch(`${settings.serviceUrl}/v1/whatsapp/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body });
    await res.arrayBuffer();
    if (res.status !== 200) {
      transcript.line('whatsapp', `the webhook was refused: HTTP ${res.status}`);
      return { answered: false };
    }
    const reply = await settings.graph.nextText(waId, seen);
    seen = reply.index + 1;
    id ??= await transcript.sessionOf('whatsapp');
    if (!id) throw new Error('no WhatsApp session');
    const turns = await transcript.tellTurns('whatsapp', id, reply.text);
    transcript.line('whatsapp', `(the reply went out as POST ${settings.graph.sends[reply.index]!.path} to the Graph API recorder)`);
    answered ||= turns.some((t) => t.status === 'completed') && reply.text.length > 0;
  }
  return { answered };
}
