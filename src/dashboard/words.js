// @ts-check
/**
 * The words people use for what the API says in codes: channels, where a bot reply came from, who handles a
 * conversation, who wrote a message, how long a customer waits and what happened to a message sent on WhatsApp.
 * Never the engine's state names.
 */

/** @type {Record<string, string>} */
export const CHANNELS = { phone: 'Phone', whatsapp: 'WhatsApp', webchat: 'Website chat' };

/** @type {Record<string, string>} */
export const SOURCES = { integrator: 'your system', ai: 'the AI', knowledge_base: 'the knowledge base', fallback: 'a standard sentence (nothing else answered)' };

/** @typedef {{ name?: string | null, email?: string | null }} Agent a colleague as the API names them */

/** A non-empty string, or null. @param {unknown} value */
const words = (value) => (typeof value === 'string' && value !== '' ? value : null);

/** @param {Record<string, unknown> | null | undefined} customer @returns {string} */
export function customerName(customer) {
  return words(customer?.name) ?? words(customer?.phone) ?? words(customer?.email) ?? 'Unknown customer';
}

/**
 * A conversation as a list names it: the service's label (the customer's name, email or number, else the first words
 * of their first message; src/text/conversation-label.ts), shown as text.
 * @param {{ label?: string, customer?: Record<string, unknown> | null } | null | undefined} c a row of GET /v1/sessions or /v1/inbox
 */
export function conversationName(c) {
  return typeof c?.label === 'string' && c.label !== '' ? c.label : customerName(c?.customer);
}

/** Who wrote a message, in words. @param {{ from?: string, agent?: Agent | null, source?: string | null }} m */
export function fromWords(m) {
  if (m.from === 'customer') return 'Customer';
  if (m.from === 'agent') return m.agent ? agentName(m.agent) : 'Team';
  if (m.from === 'note') return 'Note (only the team sees this)';
  return 'Bot';
}

/** @param {Agent | null | undefined} agent @returns {string} */
export function agentName(agent) {
  return agent?.name || agent?.email || 'a colleague';
}

/** Who handles a conversation now, in words. @param {{ handled_by?: string, agent?: Agent | null, status?: string }} c */
export function holderWords(c) {
  if (c.handled_by === 'agent') return `With ${agentName(c.agent)}`;
  if (c.handled_by === 'waiting') return 'Waiting for a person';
  if (c.status === 'ended') return 'Ended';
  return 'The bot answers';
}

/**
 * A handoff in words, per channel. On web chat and WhatsApp a person asked for waits in the Inbox (the API says
 * `connected: false` for every one), so "not connected" is the phone's word only; and a conversation a person of the
 * team answered is never "not connected".
 * @param {unknown} handoff as the API gives it: `{kind, connected, …}` @param {{ channel?: string, answered_by_team?: boolean, handled_by?: string }} [c]
 */
export function handoffWords(handoff, c = {}) {
  const { kind, connected } = handoff && typeof handoff === 'object' ? /** @type {{ kind?: unknown, connected?: unknown }} */ (handoff) : {};
  if (kind === 'forward') return 'Forwarded to the team';
  if (kind !== 'human') return 'Handed to the team';
  if (c.answered_by_team) return 'Asked for a person (answered)';
  if (c.channel === 'phone' && connected === false) return 'Asked for a person (not connected)';
  return 'Asked for a person';
}

/**
 * A notification's kind in words (GET /v1/notifications `kind`), per channel: a caller is called back, a chat is
 * answered in the chat.
 * @param {string} kind @param {string | null | undefined} channel
 */
export function notificationKindWords(kind, channel) {
  if (kind === 'human_followup') return channel === 'phone' || !channel ? 'Call back' : 'Asked for a person';
  return NOTIFICATION_KINDS[kind] ?? (kind.charAt(0).toUpperCase() + kind.slice(1)).replaceAll('_', ' ');
}

/** @type {Record<string, string>} */
const NOTIFICATION_KINDS = { forward: 'Forwarded question', endpoint_down: 'Endpoint down', endpoint_recovered: 'Endpoint recovered', mention: 'Mentioned you in a note' };

/** "4 min 05 s" since the ISO time (a wait shown ticking). @param {string | null | undefined} since */
export function waitedFor(since) {
  const start = since ? new Date(since).getTime() : Number.NaN;
  if (Number.isNaN(start)) return '';
  const seconds = Math.max(0, Math.floor((Date.now() - start) / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${String(minutes % 60).padStart(2, '0')} min` : `${Math.floor(hours / 24)} days`;
}

/** What became of a team member's message. @type {Record<string, string>} */
export const DELIVERY = { queued: 'Sending…', sent: 'Sent', delivered: 'Delivered', read: 'Read', failed: 'Failed' };
