// @ts-check
/**
 * Conversations: the live list (polled every few seconds) and one conversation with its turns, updated from its
 * Server-Sent Events stream (reply_piece events show a streamed phone reply sentence by sentence).
 */
/** @import * as Api from './api-types' */
/** @typedef {NonNullable<Api.GetSessions['sessions']>[number]} SessionRow */
/** @typedef {NonNullable<Api.GetSessionsId['turns']>[number]} Turn */
/**
 * What the engine recorded of a turn, as this screen reads it (stored JSON: the API does not check its shape, so every
 * field may be missing).
 * @typedef {{ outcome?: string, reason?: string, httpStatus?: number | null, latencyMs?: number, endpoint?: { state?: string, decision?: string, waitMs?: number }, reply?: string | null, problems?: unknown }} BotlinkRecord
 * @typedef {{ passages?: unknown, confident?: boolean }} KnowledgeRecord
 * @typedef {{ title?: string, source?: string, externalId?: string, score?: unknown }} PassageRecord
 * @typedef {{ outcomes?: ToolOutcome[] }} ToolRound
 * @typedef {{ name?: string, ok?: boolean, failure?: string, latencyMs?: number, content?: string }} ToolOutcome
 * @typedef {{ turnId?: string, message?: string, text?: string }} TurnEvent the session stream's turn events
 */
import { ApiError, api, followEvents } from './api.js';
import { errorBox, field, h, loading, replace } from './dom.js';
import { clock, when } from './time.js';
import { CHANNELS, conversationName, fromWords, handoffWords, holderWords } from './words.js';

const LIST_POLL_MS = 3_000;
/** The API gives at most 200 sessions an answer; the list grows by 50 at a time up to that. */
const PAGE = 50;
const MAX_SHOWN = 200;
const SOURCES = { integrator: 'Your system', ai: 'AI', knowledge_base: 'Knowledge base', fallback: 'Fallback' };

/** @param {Record<string, string>} names @param {unknown} key */
const named = (names, key) => (typeof key === 'string' && names[key]) || String(key ?? '—');

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderConversations(main, ctx) {
  const params = new URLSearchParams(location.search);
  const channel = h('select', { name: 'channel' },
    h('option', { value: '' }, 'All channels'),
    Object.entries(CHANNELS).map(([value, label]) => h('option', { value }, label)));
  const status = h('select', { name: 'status' }, h('option', { value: '' }, 'Active and ended'), h('option', { value: 'active' }, 'Active'), h('option', { value: 'ended' }, 'Ended'));
  channel.value = params.get('channel') ?? '';
  status.value = params.get('status') ?? '';
  const list = h('div', { class: 'list', 'aria-busy': 'true' }, loading('Loading conversations…'));
  const updated = h('p', { class: 'hint' });
  // Said by a screen reader only when the list changed, not at every poll.
  const announce = h('p', { class: 'sr-only', role: 'status' });
  const error = errorBox();
  let limit = PAGE;
  const more = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Show older conversations');
  more.addEventListener('click', () => {
    limit = Math.min(limit + PAGE, MAX_SHOWN);
    void refresh();
  });
  replace(main,
    h('h1', {}, 'Conversations'),
    h('form', { class: 'filters', 'aria-label': 'Filter conversations', onsubmit: (/** @type {Event} */ e) => e.preventDefault() }, field('Channel', channel), field('Status', status)),
    updated, announce, error.el, list, more);

  let stopped = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let shown = '';
  async function refresh() {
    clearTimeout(timer);
    const query = new URLSearchParams();
    if (channel.value) query.set('channel', channel.value);
    if (status.value) query.set('status', status.value);
    query.set('limit', String(limit));
    try {
      /** @type {Api.GetSessions} */
      const answer = await api('GET', `/v1/sessions?${query}`);
      if (stopped) return;
      error.clear();
      const sessions = answer.sessions ?? [];
      // Redrawn only when something changed, so focus and screen readers are left alone between polls.
      const fingerprint = JSON.stringify(sessions);
      if (fingerprint !== shown) {
        if (shown) announce.textContent = `The list changed: ${sessions.length} ${sessions.length === 1 ? 'conversation' : 'conversations'}.`;
        shown = fingerprint;
        replace(list, sessions.length === 0 ? empty(ctx, Boolean(channel.value || status.value)) : h('ul', { class: 'sessions' }, sessions.map(row)));
      }
      list.setAttribute('aria-busy', 'false');
      more.hidden = !answer.next_before || limit >= MAX_SHOWN;
      updated.textContent = `Updated live every few seconds; last at ${clock()}.`;
    } catch (err) {
      if (stopped) return;
      error.show(err);
    }
    if (!stopped) timer = setTimeout(() => void refresh(), LIST_POLL_MS);
  }
  const filtersChanged = () => {
    const query = new URLSearchParams();
    if (channel.value) query.set('channel', channel.value);
    if (status.value) query.set('status', status.value);
    history.replaceState(null, '', `${location.pathname}${query.size ? `?${query}` : ''}`);
    shown = '';
    list.setAttribute('aria-busy', 'true');
    void refresh();
  };
  channel.addEventListener('change', filtersChanged);
  status.addEventListener('change', filtersChanged);
  void refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** @param {import('./app.js').ScreenContext} ctx @param {boolean} filtered */
function empty(ctx, filtered) {
  if (filtered) return h('p', { class: 'empty' }, 'No conversation matches these filters. Choose “All channels” and “Active and ended” to see every conversation.');
  return h('div', { class: 'empty' },
    h('p', {}, 'No conversations yet. They appear here, live, as soon as a customer calls, writes on WhatsApp or uses the website chat.'),
    ctx.session.role === 'agent'
      ? h('p', {}, 'An owner or admin connects the channels.')
      : h('p', {}, 'Connect a channel under ', h('a', { href: '/dashboard/channels', 'data-link': true }, 'Channels'), ' or put the chat on your website from ', h('a', { href: '/dashboard/knowledge', 'data-link': true }, 'Knowledge'), '.'));
}

/** @param {SessionRow} s a session summary */
function row(s) {
  const last = s.last_message;
  return h('li', {},
    h('a', { href: `/dashboard/conversations/${encodeURIComponent(String(s.id))}`, 'data-link': true, class: 'session' },
      h('span', { class: 'who' }, conversationName(s)),
      h('span', { class: `badge ${s.status === 'active' ? 'live' : ''}` }, s.status === 'active' ? 'Active' : 'Ended'),
      h('span', { class: 'meta' }, `${named(CHANNELS, s.channel)} · ${s.turn_count} ${s.turn_count === 1 ? 'turn' : 'turns'}`),
      s.channel !== 'phone' && s.handled_by !== 'bot' ? h('span', { class: `badge ${s.handled_by === 'waiting' ? 'warn' : 'live'}` }, holderWords(s)) : null,
      s.handoff ? h('span', { class: `badge ${s.answered_by_team ? '' : 'warn'}` }, handoffWords(s.handoff, s)) : null,
      h('span', { class: 'meta' }, when(s.updated_at)),
      last ? h('span', { class: 'preview' }, `${fromWords(last)}: ${last.text ?? '(no words: a button)'}`) : null));
}

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderConversation(main, ctx) {
  const id = ctx.params[0] ?? '';
  const header = h('div', {}, loading('Loading the conversation…'));
  const turns = h('ol', { class: 'turns', 'aria-label': 'Turns' });
  const live = h('p', { class: 'hint', role: 'status' });
  const announce = h('p', { class: 'sr-only', role: 'status' });
  const error = errorBox();
  replace(main, h('p', {}, h('a', { href: '/dashboard/conversations', 'data-link': true }, '← All conversations')), h('h1', {}, 'Conversation'), error.el, header, live, announce, turns);

  const abort = new AbortController();
  /** Turns in progress, shown from the stream until the stored turn replaces them (by the stream's turnId). @type {Map<string | undefined, HTMLElement>} */
  const pending = new Map();
  let reloading = Promise.resolve();

  async function reload() {
    try {
      /** @type {Api.GetSessionsId} */
      const s = await api('GET', `/v1/sessions/${encodeURIComponent(id)}`, { signal: abort.signal });
      const stored = s.turns ?? [];
      if (abort.signal.aborted) return;
      error.clear();
      replace(header, summary(s), s.channel === 'phone' ? null
        : h('p', {}, h('a', { href: `/dashboard/inbox/${encodeURIComponent(String(s.id))}`, 'data-link': true }, 'Open in the Inbox'), ' to take it over and answer the customer.'));
      replace(turns, stored.length === 0 && pending.size === 0 ? h('li', { class: 'empty' }, 'No turns yet: the customer has not written or spoken.') : stored.map(turn));
      for (const [turnId, el] of pending) if (!stored.some((t) => t.id === turnId)) turns.append(el);
    } catch (err) {
      if (abort.signal.aborted) return;
      if (err instanceof ApiError && err.status === 404) replace(header, h('p', { class: 'empty' }, 'This conversation does not exist in your workspace. ', h('a', { href: '/dashboard/conversations', 'data-link': true }, 'See all conversations'), '.'));
      else error.show(err);
    }
  }
  const queueReload = () => (reloading = reloading.then(reload));

  /** @param {string} type @param {unknown} data */
  function onEvent(type, data) {
    /** @type {TurnEvent} */
    const event = data && typeof data === 'object' ? data : {};
    if (type === 'turn_started') {
      const el = h('li', { class: 'turn pending', 'data-turn': event.turnId },
        h('h2', {}, 'New turn', h('span', { class: 'badge live' }, 'in progress')),
        h('p', { class: 'said' }, h('span', { class: 'label' }, 'Customer: '), String(event.message ?? '')),
        h('p', { class: 'reply' }, h('span', { class: 'label' }, 'Reply: '), h('span', { class: 'streaming' }, h('span', { class: 'hint' }, 'being written…'))));
      pending.set(event.turnId, el);
      announce.textContent = `The customer said: ${String(event.message ?? '')}`;
      turns.querySelector('.empty')?.remove();
      turns.append(el);
    } else if (type === 'reply_piece' || type === 'reply') {
      const reply = pending.get(event.turnId)?.querySelector('.streaming');
      if (!reply) return;
      reply.querySelector('.hint')?.remove();
      if (type === 'reply') {
        reply.textContent = String(event.text ?? '');
        announce.textContent = `Reply: ${String(event.text ?? '')}`;
      }
      else reply.append(h('span', { class: 'piece' }, `${reply.textContent ? ' ' : ''}${String(event.text ?? '')}`));
    } else if (type === 'turn_completed' || type === 'turn_cancelled') {
      pending.delete(event.turnId);
      queueReload();
    } else if (type === 'state') {
      queueReload();
    } else if (type === 'end') {
      live.textContent = 'Live updates stopped: your sign-in was revoked or expired.';
    }
  }

  async function follow() {
    await reloading;
    await followEvents(`/v1/sessions/${encodeURIComponent(id)}/events`, {
      signal: abort.signal,
      onEvent,
      onConnect: () => (live.textContent = 'Live: new turns appear as they happen.'),
      onInterrupted: (err) => (live.textContent = `Live updates interrupted (${err instanceof Error ? err.message : String(err)}); trying again.`),
      // The stream ended or failed: catch up from the stored turns, then listen again.
      onGap: queueReload,
    });
  }
  queueReload();
  void follow();
  return () => abort.abort();
}

/** @param {Api.GetSessionsId} s */
function summary(s) {
  const c = s.customer ?? {};
  return h('dl', { class: 'facts' },
    fact('Channel', named(CHANNELS, s.channel)),
    fact('Status', s.status === 'active' ? 'Active' : s.channel === 'webchat' ? 'Ended: no new message for a while' : 'Ended'),
    fact('Handled by', holderWords(s)),
    fact('Customer', [c.name, c.phone, c.email].filter(Boolean).join(' · ') || 'Unknown'),
    fact('Language', s.language ?? '—'),
    fact('Started', when(s.created_at)),
    fact('Handoff', s.handoff ? describe(s.handoff) : 'None'));
}

/** @param {string} term @param {import('./dom.js').Child | import('./dom.js').Child[]} value */
function fact(term, value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, value));
}

/** Compact text for a JSON value from the API (never parsed as markup). @param {unknown} value */
function describe(value) {
  if (value == null) return '—';
  if (typeof value !== 'object') return String(value);
  const v = /** @type {Record<string, unknown>} */ (value);
  if (typeof v.sentence === 'string') return `${String(v.kind ?? '')}${v.connected ? ' (connected)' : ''}: ${v.sentence}`;
  return JSON.stringify(value);
}

/**
 * What the turn did about the endpoint's health (docs/architecture.md, "Endpoint health"), in words.
 * @param {{ state?: string, decision?: string, waitMs?: number }} e
 */
function endpointWait(e) {
  const state = String(e.state ?? 'unknown');
  switch (e.decision) {
    case 'not_waited': return `${state}: not waited for (the request was still sent)`;
    case 'not_sent': return `${state}: not waited for, and not sent (too many requests to it still running)`;
    // Turns recorded before every state but down waited the whole deadline.
    case 'shortened': return `${state}: waited at most ${e.waitMs} ms, its own recent answer time`;
    default: return `${state}: waited up to ${e.waitMs} ms`;
  }
}

/**
 * What the customer saw or heard: the reply, or, for a turn that was a handoff, the handoff's sentence (it is what
 * was sent).
 * @param {Turn} t a stored turn
 */
function shownReply(t) {
  if (t.reply != null) return String(t.reply);
  const sentence = record(t.handoff)?.sentence;
  if (typeof sentence === 'string') return sentence;
  return h('em', {}, 'nothing was sent');
}

/** A stored JSON value as an object, or null. @param {unknown} value */
function record(value) {
  return value && typeof value === 'object' && !Array.isArray(value) ? /** @type {Record<string, unknown>} */ (value) : null;
}

/** @param {Turn} t a stored turn */
function turn(t) {
  const b = /** @type {BotlinkRecord | null} */ (record(t.botlink));
  /** @type {ToolRound[]} */
  const rounds = Array.isArray(t.tool_rounds) ? t.tool_rounds : [];
  const errors = Array.isArray(t.errors) ? t.errors : [];
  return h('li', { class: 'turn', 'data-turn': t.id },
    h('h2', {}, `Turn ${t.ordinal}`, t.source ? h('span', { class: `badge source-${t.source}`, 'data-testid': 'source' }, `Reply from: ${named(SOURCES, t.source)}`) : null,
      t.status !== 'completed' ? h('span', { class: 'badge warn' }, t.status) : null),
    h('p', { class: 'said' }, h('span', { class: 'label' }, 'Customer: '), t.customer_message ? String(t.customer_message) : h('em', {}, 'asked for the team (a button, no words)')),
    h('p', { class: 'reply', 'data-testid': 'reply' }, h('span', { class: 'label' }, 'Reply: '), shownReply(t)),
    timingBar(t),
    b ? h('details', {}, h('summary', {}, `Bot Link: ${b.outcome === 'answer' ? 'answered' : 'no answer'} (${b.reason})`),
      h('dl', { class: 'facts' },
        fact('Outcome', b.outcome ?? '—'),
        fact('Reason', b.reason ?? '—'),
        fact('HTTP status', b.httpStatus ?? '—'),
        fact('Latency', `${b.latencyMs} ms`),
        b.endpoint ? fact('Endpoint health', endpointWait(b.endpoint)) : null,
        b.reply != null ? fact('Its reply', String(b.reply)) : null),
      problems(b.problems)) : null,
    record(t.knowledge) ? knowledge(/** @type {KnowledgeRecord} */ (t.knowledge)) : null,
    rounds.length ? h('details', {}, h('summary', {}, `Tool calls (${rounds.reduce((n, r) => n + (r.outcomes?.length ?? 0), 0)})`),
      h('ul', { class: 'plain' }, rounds.flatMap((r) => (r.outcomes ?? []).map((o) =>
        h('li', {}, h('code', {}, String(o.name)), ` ${o.ok ? 'ok' : `failed (${o.failure ?? 'error'})`}, ${o.latencyMs} ms: `, h('span', { class: 'excerpt' }, String(o.content ?? '').slice(0, 300))))))) : null,
    t.handoff ? h('p', { class: 'meta' }, `Handoff: ${describe(t.handoff)}`) : null,
    errors.length ? h('div', {}, h('p', { class: 'label' }, 'Problems:'), h('ul', { class: 'plain' }, errors.map((/** @type {unknown} */ e) => h('li', {}, describe(e))))) : null);
}

/** What the knowledge search found: each passage's title and source (its text stays in the knowledge base). @param {KnowledgeRecord} k */
function knowledge(k) {
  /** @type {PassageRecord[]} */
  const passages = Array.isArray(k.passages) ? k.passages : [];
  const line = `Knowledge base: ${passages.length} ${passages.length === 1 ? 'passage' : 'passages'}, ${k.confident ? 'confident' : 'not confident'}.`;
  if (passages.length === 0) return h('p', { class: 'meta' }, line);
  return h('details', {}, h('summary', {}, line),
    h('ul', { class: 'plain' }, passages.map((p) => h('li', {}, h('strong', {}, String(p.title ?? '')), ` (${String(p.source ?? '')} ${String(p.externalId ?? '')}${typeof p.score === 'number' ? `, score ${p.score.toFixed(2)}` : ''})`))));
}

/** @param {unknown} list */
function problems(list) {
  if (!Array.isArray(list) || list.length === 0) return null;
  return h('div', {}, h('p', { class: 'label' }, 'Problems in the answer:'), h('ul', { class: 'plain' }, list.map((/** @type {{ field?: unknown, message?: unknown }} */ p) => h('li', {}, h('code', {}, String(p?.field)), ` ${String(p?.message)}`))));
}

/**
 * Where the time of a turn went, from its `timings` (milliseconds): the Bot Link (first byte, then the rest of the
 * answer), the knowledge search, each AI round and each tool call. The bar is drawn for the eye; the list beside
 * it says the same in text.
 * @param {Turn} t
 */
function timingBar(t) {
  const timings = t.timings && typeof t.timings === 'object' ? /** @type {Record<string, number>} */ (t.timings) : {};
  /** @type {{ label: string, ms: number, kind: string }[]} */
  const parts = [];
  const first = timings.botlinkFirstByte;
  if (typeof timings.botlink === 'number') {
    if (typeof first === 'number' && first <= timings.botlink) {
      parts.push({ label: 'Bot Link: connect and first byte', ms: first, kind: 'connect' });
      parts.push({ label: 'Bot Link: rest of the answer', ms: timings.botlink - first, kind: 'botlink' });
    } else parts.push({ label: 'Bot Link', ms: timings.botlink, kind: 'botlink' });
  }
  for (const [key, ms] of Object.entries(timings)) {
    if (typeof ms !== 'number' || key === 'botlink' || key === 'botlinkFirstByte') continue;
    if (key === 'knowledge') parts.push({ label: 'Knowledge search', ms, kind: 'knowledge' });
    else if (/^ai\d+$/.test(key)) parts.push({ label: `AI round ${Number(key.slice(2)) + 1}`, ms, kind: 'ai' });
    else if (key.startsWith('tool')) parts.push({ label: `Tool ${key.slice(key.indexOf(':') + 1)}`, ms, kind: 'tool' });
    else parts.push({ label: key, ms, kind: 'other' });
  }
  const total = t.started_at && t.ended_at ? Math.max(0, new Date(t.ended_at).getTime() - new Date(t.started_at).getTime()) : null;
  if (parts.length === 0) return h('p', { class: 'meta' }, total == null ? 'No timings recorded.' : `Took ${total} ms.`);
  const sum = parts.reduce((n, p) => n + p.ms, 0) || 1;
  return h('div', { class: 'timing', 'data-testid': 'timings' },
    h('div', { class: 'bar', 'aria-hidden': 'true' }, parts.map((p) => {
      const seg = h('span', { class: `seg ${p.kind}`, title: `${p.label}: ${p.ms} ms` });
      seg.style.flexGrow = String(Math.max(p.ms, sum / 100));
      return seg;
    })),
    h('ul', { class: 'legend' }, parts.map((p) => h('li', {}, h('span', { class: `key ${p.kind}`, 'aria-hidden': 'true' }), `${p.label}: ${p.ms} ms`)),
      total != null ? h('li', {}, `Whole turn: ${total} ms`) : null));
}
