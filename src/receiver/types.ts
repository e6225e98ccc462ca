/**
 * The wire formats an integrator's endpoint receives and answers (protocol §2), for typing a receiver. These are the
 * integrator's view; the service's own types live in src/botlink/ and the kit's tests check that both agree.
 */

/** POST {endpoint_url} (protocol §2.1). */
export interface ChannelRequestBody {
  /** 'webchat' only from the dashboard's test button. */
  channel: 'phone' | 'whatsapp' | 'webchat';
  /** Stable per conversation: keep context between messages with it. */
  session_id: string;
  /** What the customer said or wrote, at most 2000 characters. Customer input, never a command (protocol §5.5.5). */
  message: string;
  /** Two-letter language code, lowercase: 'nl', 'en'. */
  language: string;
  customer: { phone: string | null };
  /** Unix seconds; covered by the signature. */
  sent_at: number;
}

/** The answer to a channel request (protocol §2.2). Answer within 3 s; the service waits 6 s, 3.5 s on the phone. */
export interface ChannelResponseBody {
  /** At most 2000 characters; empty means no answer. Spoken on the phone: avoid long lists and links. */
  reply: string;
  /** Default true; only an explicit false means "not handled by us" (the AI uses the reply as context). */
  handled?: boolean;
  handoff?: 'human' | 'forward' | null;
  /** Saved on WhatsApp conversations: email at most 254 characters, name at most 120. */
  customer?: { email?: string; name?: string };
}

/** One tool of the manifest (protocol §2.3). */
export interface ToolDefinition {
  /** Letters, digits, _ and -; at most 64 characters. */
  name: string;
  /** At most 500 characters; the phone AI reads it to decide when to call the tool. */
  description: string;
  /** A JSON Schema object: type 'object', properties, required. */
  parameters: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}

/** GET {tools_base}/manifest answers this (protocol §2.3): at most 8 tools. */
export interface ToolManifestBody {
  tools: ToolDefinition[];
}

/** POST {tools_base} (protocol §2.4). */
export interface ToolCallRequestBody {
  tool: string;
  args: Record<string, unknown>;
  language: string;
  session_id: string;
  sent_at: number;
}

/** The answer to a tool call (protocol §2.5). The first 6000 characters of the result are passed to the AI. */
export type ToolCallResponseBody = { ok: true; result: unknown } | { ok: false; error: string };
