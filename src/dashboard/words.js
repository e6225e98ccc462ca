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

/** @param {any} customer @returns {string} */
export function customerName(customer) {
  return customer?.name || customer?.phone || customer?.email || 'Unknown customer';
}

/** Who wrote a message, in words. @param {{ from: string, agent?: any, source?: string | null }} m */
export function fromWords(m) {
  if (m.from === 'customer') return 'Customer';
  if (m.from === 'agent') return m.agent ? agentName(m.agent) : 'Team';
  return 'Bot';
}

/** @param {any} agent @returns {string} */
export function agentName(agent) {
  return agent?.name || agent?.email || 'a colleague';
}

/** Who handles a conversation now, in words. @param {{ handled_by?: string, agent?: any, status?: string }} c */
export function holderWords(c) {
  if (c.handled_by === 'agent') return `With ${agentName(c.agent)}`;
  if (c.handled_by === 'waiting') return 'Waiting for a person';
  if (c.status === 'ended') return 'Ended';
  return 'The bot answers';
}

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
