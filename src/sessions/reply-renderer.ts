/**
 * How a channel turns a reply into what its customer gets: spoken words on the phone, WhatsApp's formatting, the web
 * chat's text. Each channel owns its renderer (src/channels/renderers.ts) and the session runtime asks the one of the
 * session's channel, so the runtime does not know what any channel does with text.
 */
import type { ReplySource } from '../../machines/session-types.ts';

export interface ReplyToRender {
  text: string;
  /** Who wrote it; null for a piece of a streamed answer and for the service's own sentences. */
  source: ReplySource | null;
  language: string;
}

/** The reply as the channel delivers it; `maxChars`: the room left (a streamed spoken reply), default the channel's own. */
export type ReplyRenderer = (reply: ReplyToRender, maxChars?: number) => string;
