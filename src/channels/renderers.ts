/** Each channel's reply renderer (src/sessions/reply-renderer.ts), handed to the session runtime when it is made. */
import type { Channel } from '../channels-and-handoffs.ts';
import type { ReplyRenderer } from '../sessions/reply-renderer.ts';
import { renderForSpeech, renderForText } from '../ai/render.ts';

export const channelRenderers: Record<Channel, ReplyRenderer> = {
  // docs/phone.md: replies are spoken, within the spoken length of a reply.
  phone: ({ text, language }, maxChars) => renderForSpeech(text, language, maxChars),
  // protocol §1.3: on WhatsApp a handled answer is sent as it is; everything else in WhatsApp's formatting.
  whatsapp: ({ text, source }) => (source === 'integrator' ? text : renderForText(text, 'whatsapp')),
  webchat: ({ text }) => renderForText(text, 'webchat'),
};
