/**
 * A website chat, as the widget on a shop's page makes it (docs/webchat.md): the widget key in `X-Widget-Key`, the
 * shop's origin in `Origin`, and after the start the conversation's visitor token in `X-Visitor-Token`. The visitor
 * asks a question, leaves a lead and asks for a person; the `new_chat`, `new_lead` and `escalation` webhooks that
 * follow are checked by the receiver in ./webhook-receiver.ts.
 */
import type { Api, Transcript } from './transcript.ts';

export interface WebsiteChatSettings {
  widgetKey: string;
  /** The shop's page origin, one of the workspace's allowed origins. */
  shopOrigin: string;
  quick: boolean;
}

export async function playWebsiteChat(transcript: Transcript, api: Api, settings: WebsiteChatSettings): Promise<{ answered: boolean; lead: boolean }> {
  const headers = { 'x-widget-key': settings.widgetKey, origin: settings.shopOrigin };
  const first = 'How long does delivery take?';
  transcript.customer('webchat', first, ` on ${settings.shopOrigin}/tents`);
  const started = await api('POST', '/v1/webchat/conversations', { headers, body: { visitor_message: first, page_url: `${settings.shopOrigin}/tents` } });
  if (started.status !== 201) {
    transcript.line('webchat', `the chat could not start: HTTP ${started.status} ${started.text}`);
    return { answered: false, lead: false };
  }
  const conversation = String(started.body.conversation_id);
  // What the visitor writes next needs the conversation's own token, as the widget sends it (docs/webchat.md).
  const visitor = { ...headers, 'x-visitor-token': String(started.body.visitor_token) };
  const id = await transcript.sessionOf('webchat', conversation);
  if (!id) throw new Error(`no session for conversation ${conversation}`);
  const turns = await transcript.tellTurns('webchat', id, String(started.body.reply ?? '(no reply)'));
  const answered = turns.some((t) => t.status === 'completed') && Boolean(started.body.reply);

  if (!settings.quick) {
    const second = 'Can I return boots that are too small?';
    transcript.customer('webchat', second);
    const res = await api('POST', `/v1/webchat/conversations/${conversation}/messages`, { headers: visitor, body: { message: second } });
    await transcript.tellTurns('webchat', id, String(res.body?.reply ?? `(HTTP ${res.status})`));
  }

  const lead = { name: 'Sam Jansen', email: 'sam@example.org', phone: '+31 6 1234 5678' };
  transcript.line('webchat', `visitor leaves a lead: ${lead.name} <${lead.email}> ${lead.phone}`);
  const leadRes = await api('POST', `/v1/webchat/conversations/${conversation}/lead`, { headers: visitor, body: lead });
  transcript.line('webchat', `lead saved: HTTP ${leadRes.status}`);

  const escalation = 'I would like someone to call me back, please.';
  transcript.customer('webchat', escalation, ' (presses "talk to a person")');
  const escalated = await api('POST', `/v1/webchat/conversations/${conversation}/escalate`, { headers: visitor, body: { message: escalation } });
  transcript.line('webchat', `botlink: ${String(escalated.body?.reply ?? `(HTTP ${escalated.status})`)}`);
  return { answered, lead: leadRes.status === 200 };
}
