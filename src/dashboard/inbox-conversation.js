// @ts-check
/**
 * One conversation in the Inbox: the transcript (the customer, the bot with where its answer came from, the team with
 * each message's delivery), a short summary for whoever takes it over, and what a person can do: take it over, reply
 * (Enter sends, Shift+Enter a new line), hand it back to the bot, close it; owners and admins add a reply of the team
 * as an answer of the knowledge base. Live through the session's stream. On
 * WhatsApp more than 24 hours after the customer's last message the page says why no reply can be written.
 */
import { ApiError, api, followEvents, isManager, saveSession } from './api.js';
import { busy, errorBox, field, h, loading, replace } from './dom.js';
import { when } from './time.js';
import { addAnswerForm } from './knowledge-editor.js';
import { noteBox, noteTools, placeholderValues, replyTools } from './inbox-reply-tools.js';
import { customerPanel } from './customer-panel.js';
import { assignControl } from './inbox-assign.js';
import { agentTyping, confirmClose, satisfactionWords, visitorTyping } from './inbox-visitor-side.js';
import { CHANNELS, DELIVERY, SOURCES, agentName, customerName, fromWords, holderWords, waitedFor } from './words.js';

/** WhatsApp's customer-service window (docs/whatsapp.md): a free-form reply only within 24 h of the customer's last message. */
const WHATSAPP_WINDOW_MS = 24 * 60 * 60 * 1000;
/** The summary's last turns. */
const SUMMARY_MESSAGES = 4;

/** @import * as Api from './api-types' */
/** @typedef {import('./inbox-reply-tools.js').Message} Message */

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderInboxConversation(main, ctx) {
  const id = ctx.params[0] ?? '';
  const facts = h('div', {}, loading('Loading the conversation…'));
  const summary = h('section', { class: 'card', 'aria-labelledby': 'so-far' });
  // Focusable from a script only: where the focus goes when the note it was on is deleted.
  const transcript = h('ol', { class: 'transcript', 'aria-label': 'Messages', tabindex: -1 });
  // "Add as an answer" from a reply of the team opens here, out of the transcript, so a new message keeps what is typed.
  const teachPanel = h('section', { class: 'card', 'aria-label': 'Teach the bot', hidden: true });
  const actions = h('section', { class: 'card actions', 'aria-labelledby': 'you' });
  const announce = h('p', { class: 'sr-only', role: 'status' });
  const live = h('p', { class: 'hint' });
  const typing = visitorTyping();
  const error = errorBox();
  replace(main,
    h('p', {}, h('a', { href: '/dashboard/inbox', 'data-link': true }, '← Inbox')),
    h('h1', {}, 'Conversation'), facts, summary, h('h2', {}, 'Messages'), transcript, typing.el, teachPanel, live, announce, error.el, actions);

  const composer = replyBox(id, () => queueReload(), (err) => onSendError(err), () => placeholderValues(s, ctx.session), () => s?.language);
  // A note for whoever does not hold the conversation (every role writes notes): kept across redraws.
  const notesOnly = noteBox(id, () => queueReload());
  const abort = new AbortController();
  const panel = customerPanel(id, abort.signal);
  const assign = assignControl(id, () => reload(), abort.signal);
  facts.after(panel.el);
  /** @type {Api.GetSessionsId | null} */
  let s = null;
  let shownMessages = '';
  let shownActions = '';
  let reloading = Promise.resolve();
  /** The language model's summary (GET /v1/sessions/{id}/summary), read once when the page opens; null without one. */
  let aiSummary = /** @type {string | null} */ (null);
  /** The signed-in user's id: known from the sign-in, or learnt (a token sign-in says no more than the role). */
  let myId = ctx.session.userId ?? null;
  // The team's notes in the transcript: their author edits and deletes them, an owner deletes anyone's.
  const notes = noteTools({
    sessionId: id,
    me: () => myId,
    owner: ctx.session.role === 'owner',
    changed: () => queueReload(),
    announce: (words) => (announce.textContent = words),
    afterDelete: () => transcript.focus(),
  });

  async function reload() {
    try {
      /** @type {Api.GetSessionsId} */
      const answer = await api('GET', `/v1/sessions/${encodeURIComponent(id)}`, { signal: abort.signal });
      if (abort.signal.aborted) return;
      if (answer.handled_by === 'agent' && !myId) {
        /** @type {Api.GetInbox} */
        const mine = await api('GET', '/v1/inbox?view=mine', { signal: abort.signal });
        if (mine.conversations?.some((c) => c.id === answer.id)) learn(answer.agent?.user_id);
      }
      s = answer;
      show();
    } catch (err) {
      if (abort.signal.aborted) return;
      if (err instanceof ApiError && err.status === 404) replace(facts, h('p', { class: 'empty' }, 'This conversation does not exist in your workspace. ', h('a', { href: '/dashboard/inbox', 'data-link': true }, 'Back to the Inbox'), '.'));
      else error.show(err);
    }
  }
  const queueReload = () => (reloading = reloading.then(reload));
  /** @param {unknown} userId */
  function learn(userId) {
    if (typeof userId !== 'string' || myId) return;
    myId = userId;
    saveSession({ ...ctx.session, userId });
  }

  function show() {
    if (!s) return;
    replace(facts, h('dl', { class: 'facts' },
      fact('Customer', [s.customer?.name, s.customer?.phone, s.customer?.email].filter(Boolean).join(' · ') || customerName(s.customer)),
      fact('Channel', CHANNELS[String(s.channel)] ?? String(s.channel)),
      fact('Handled by', h('span', { 'data-testid': 'holder' }, holderWords(s))),
      s.handled_by === 'waiting' ? fact('Waiting for', h('span', { 'data-waiting-since': s.waiting_since ?? '' }, waitedFor(s.waiting_since))) : null,
      fact('Started', when(s.created_at)),
      s.satisfaction ? fact('Satisfaction', satisfactionWords(s.satisfaction)) : null));
    panel.show(s);
    assign.show(s, facts);
    const messages = messagesOf(s);
    const fingerprint = JSON.stringify(messages);
    if (fingerprint !== shownMessages) {
      const before = shownMessages ? JSON.parse(shownMessages).length : messages.length;
      shownMessages = fingerprint;
      replace(summary, h('h2', { id: 'so-far' }, 'So far'), summaryOf(s, messages, aiSummary));
      // A note being edited is drawn again with its editor: the focus stays in it.
      const focused = document.activeElement instanceof HTMLElement && transcript.contains(document.activeElement) ? document.activeElement : null;
      replace(transcript, messages.length === 0 ? h('li', { class: 'empty' }, 'No message yet.')
        : messages.map((m, i) => (m.from === 'note' ? notes.item(m) : message(m, () => retry(m), teachFrom(messages, i)))));
      if (focused?.isConnected && document.activeElement !== focused) focused.focus();
      const newest = messages.at(-1);
      if (messages.length > before && newest?.from === 'customer') announce.textContent = `The customer wrote: ${newest.text ?? ''}`;
    }
    const key = `${s.handled_by}|${s.agent?.user_id ?? ''}|${myId}|${s.status}|${windowClosed(s, messages)}`;
    if (key !== shownActions) {
      shownActions = key;
      replace(actions, h('h2', { id: 'you' }, 'Your part'), ...actionsFor(s, messages));
    }
  }

  /**
   * Owners and admins turn a reply of the team into an answer of the knowledge base: the customer's question before
   * it and the reply, prefilled (docs/knowledge.md, "The team teaches the bot").
   * @param {Message[]} messages @param {number} i @returns {(() => void) | null}
   */
  function teachFrom(messages, i) {
    const reply = messages[i];
    if (!isManager(ctx.session) || reply?.from !== 'agent' || !reply.text) return null;
    const asked = messages.slice(0, i).findLast((m) => m.from === 'customer' && m.text);
    if (!asked?.text) return null;
    const question = asked.text;
    const answer = reply.text;
    return () => {
      const form = addAnswerForm({ sessionId: String(s?.id ?? id), question, answer });
      replace(teachPanel, form.el);
      teachPanel.hidden = false;
      form.focus();
    };
  }

  /** @param {Message} m */
  async function retry(m) {
    error.clear();
    try {
      await api('POST', `/v1/sessions/${encodeURIComponent(id)}/messages/${encodeURIComponent(m.id)}/retry`);
      queueReload();
    } catch (err) {
      error.show(err);
    }
  }

  /** @param {unknown} err */
  function onSendError(err) {
    if (err instanceof ApiError && err.code === 'whatsapp_window_closed') {
      shownActions = '';
      queueReload();
    }
    if (err instanceof ApiError && err.code === 'not_holder') queueReload();
  }

  /** @param {Api.GetSessionsId} session @param {Message[]} messages @returns {import('./dom.js').Child[]} */
  function actionsFor(session, messages) {
    if (session.channel === 'phone') return [h('p', {}, 'A phone call goes to a person through the transfer number (Team screen), not here. This page shows what was said.'), notesOnly.el];
    const mine = session.handled_by === 'agent' && myId !== null && session.agent?.user_id === myId;
    const heldByOther = session.handled_by === 'agent' && !mine;
    const out = [];
    if (heldByOther) out.push(h('p', { 'data-testid': 'held-by' }, `${agentName(session.agent)} holds this conversation and answers the customer.`));
    if (mine) {
      if (windowClosed(session, messages)) {
        out.push(h('p', { class: 'notice', 'data-testid': 'window-closed' },
          "More than 24 hours passed since the customer's last WhatsApp message. WhatsApp lets a business write first only with an approved template message, so no reply can be written here until the customer writes again."));
      } else {
        out.push(composer.el);
      }
    } else if (session.status === 'ended' && session.handled_by === 'bot') {
      out.push(h('p', {}, 'This conversation is closed. Take it over to write to the customer again.'));
    } else if (session.handled_by !== 'agent') {
      out.push(h('p', {}, session.handled_by === 'waiting'
        ? 'The customer asked for a person. Take the conversation over to answer; the bot stays quiet while you hold it.'
        : 'The bot answers this conversation. Take it over to answer yourself; the bot stays quiet while you hold it.'));
    }
    /** @type {HTMLButtonElement[]} */
    const buttons = [];
    if (!mine) out.push(notesOnly.el);
    if (session.handled_by !== 'agent') buttons.push(button('Take over', '', () => takeover()));
    const mayEnd = mine || session.handled_by === 'waiting' || (heldByOther && isManager(ctx.session));
    if (mayEnd) {
      buttons.push(button('Hand back to the bot', 'quiet', () => post('handback')));
      if (session.status !== 'ended' || session.handled_by !== 'bot') {
        const closeButton = button('Close', 'danger', async () => {
          if (await confirmClose(closeButton)) await post('close');
        });
        buttons.push(closeButton);
      }
    }
    out.push(h('div', { class: 'row' }, buttons));
    return out;
  }

  async function takeover() {
    error.clear();
    try {
      /** @type {Api.PostSessionsIdTakeover} */
      const answer = await api('POST', `/v1/sessions/${encodeURIComponent(id)}/takeover`);
      learn(answer?.agent?.user_id);
      await queueReload();
      composer.focus();
    } catch (err) {
      // Two people pressed Take over at once: the other was quicker, and the page says who.
      if (err instanceof ApiError && err.code === 'taken') error.show(new Error(err.holder ? `${agentName(err.holder)} took this conversation over first.` : err.message));
      else error.show(err);
      queueReload();
    }
  }

  /** @param {'handback' | 'close'} what */
  async function post(what) {
    error.clear();
    try {
      await api('POST', `/v1/sessions/${encodeURIComponent(id)}/${what}`);
      announce.textContent = what === 'close' ? 'The conversation is closed.' : 'The bot answers the customer again.';
    } catch (err) {
      error.show(err);
    }
    queueReload();
  }

  /** @param {string} label @param {string} kind @param {() => Promise<void>} work */
  function button(label, kind, work) {
    const b = h('button', { type: 'button', class: kind || null });
    b.textContent = label;
    b.addEventListener('click', () => void busy(b, work));
    return b;
  }

  /** @param {string} type @param {unknown} data */
  function onEvent(type, data) {
    if (type === 'typing') typing.show(data);
    if (type === 'message') typing.clear();
    if (['message', 'message_status', 'handled_by', 'turn_completed', 'turn_cancelled', 'note', 'note_deleted'].includes(type)) queueReload();
  }

  async function follow() {
    await reloading;
    await followEvents(`/v1/sessions/${encodeURIComponent(id)}/events`, {
      signal: abort.signal,
      onEvent,
      onConnect: () => (live.textContent = 'Live: new messages appear as they come.'),
      onInterrupted: () => (live.textContent = 'Live updates interrupted; trying again.'),
      onGap: queueReload,
    });
  }
  const ticking = setInterval(() => {
    for (const el of facts.querySelectorAll('[data-waiting-since]')) el.textContent = waitedFor(el.getAttribute('data-waiting-since'));
  }, 1_000);
  queueReload();
  void follow();
  // Written by the language model when one is set: it may take seconds, so the page does not wait for it.
  /** @type {Promise<Api.GetSessionsIdSummary | null>} */ (api('GET', `/v1/sessions/${encodeURIComponent(id)}/summary`, { signal: abort.signal })).then((answer) => {
    if (abort.signal.aborted || answer?.source !== 'ai' || typeof answer.text !== 'string') return;
    aiSummary = answer.text;
    shownMessages = '';
    if (s) show();
  }, () => undefined);
  return () => {
    abort.abort();
    clearInterval(ticking);
  };
}

/**
 * The reply box: Enter sends, Shift+Enter starts a new line. Kept across redraws, so what is being typed stays.
 * @param {string} id @param {() => void} sent @param {(err: unknown) => void} failed
 * @param {() => import('./inbox-reply-tools.js').PlaceholderValues} values what a saved reply's placeholders are filled with
 * @param {() => string | null | undefined} language the conversation's, searched first by Insert from knowledge
 */
function replyBox(id, sent, failed, values, language) {
  const text = h('textarea', { rows: 3, name: 'text', autocomplete: 'off' });
  const error = errorBox();
  const send = h('button', { type: 'submit' }, 'Send');
  const form = h('form', { class: 'reply-box', 'aria-label': 'Reply to the customer' },
    field('Your reply', text, 'Enter sends; Shift+Enter starts a new line; / at the start picks a saved reply. The customer sees your name.'), error.el, h('div', { class: 'row' }, send));
  // Saved replies after /, Insert from knowledge, the Note switch (before the keydown below: Enter picks a saved reply).
  const tools = replyTools({ text, send, form, values, language });
  // The customer's widget shows "… is typing" while the holder writes (not a note).
  const typing = agentTyping(id, () => tools.isNote());
  text.addEventListener('input', typing.input);
  form.lastElementChild?.append(tools.el);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const words = text.value.trim();
    if (!words) {
      error.show(new Error('Write something first.'));
      text.focus();
      return;
    }
    error.clear();
    void busy(send, async () => {
      try {
        await api('POST', `/v1/sessions/${encodeURIComponent(id)}/${tools.isNote() ? 'notes' : 'messages'}`, { body: { text: words } });
        text.value = '';
        tools.sent();
        typing.sent();
        sent();
      } catch (err) {
        error.show(err);
        failed(err);
      }
      text.focus();
    });
  });
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  return { el: h('div', {}, form, tools.panel), focus: () => text.focus() };
}

/** The conversation's messages; a conversation from before messages were kept shows its turns instead. @param {Api.GetSessionsId} s @returns {Message[]} */
function messagesOf(s) {
  if (Array.isArray(s.messages) && s.messages.some((m) => m.from !== 'note')) return s.messages;
  /** @type {Message[]} */
  const out = [];
  for (const t of Array.isArray(s.turns) ? s.turns : []) {
    if (t.customer_message) out.push({ id: `${t.id}-c`, from: 'customer', text: t.customer_message, at: t.started_at });
    const handoff = t.handoff && typeof t.handoff === 'object' ? /** @type {{ sentence?: unknown }} */ (t.handoff) : null;
    const reply = t.reply ?? (typeof handoff?.sentence === 'string' ? handoff.sentence : null);
    if (reply) out.push({ id: `${t.id}-b`, from: 'bot', text: reply, at: t.ended_at ?? t.started_at, ...(t.source ? { source: t.source } : {}) });
  }
  // The team's notes on a phone call (or a conversation from before messages were kept), by time.
  const notes = Array.isArray(s.messages) ? s.messages : [];
  return notes.length ? [...out, ...notes].sort((a, b) => a.at.localeCompare(b.at)) : out;
}

/** @param {Api.GetSessionsId} s @param {Message[]} messages */
function windowClosed(s, messages) {
  if (s.channel !== 'whatsapp') return false;
  const last = messages.filter((m) => m.from === 'customer').at(-1);
  return !last || Date.now() - new Date(last.at).getTime() > WHATSAPP_WINDOW_MS;
}

/**
 * A few lines for whoever takes over: the language model's summary when there is one, why a person is here, and the
 * last turns in a sentence each.
 * @param {Api.GetSessionsId} s @param {Message[]} messages @param {string | null} aiSummary
 */
function summaryOf(s, messages, aiSummary) {
  const lines = [];
  const kind = s.handoff && typeof s.handoff === 'object' ? /** @type {{ kind?: unknown }} */ (s.handoff).kind : undefined;
  if (s.handled_by === 'waiting') lines.push(kind === 'human' ? 'A person was asked for.' : 'The customer asked for a person.');
  else if (kind === 'forward') lines.push('Forwarded to the team to follow up.');
  const customerCount = messages.filter((m) => m.from === 'customer').length;
  lines.push(`${customerCount} ${customerCount === 1 ? 'message' : 'messages'} from the customer since ${when(s.created_at)}.`);
  const recent = messages.filter((m) => m.from !== 'note').slice(-SUMMARY_MESSAGES);
  return [
    aiSummary ? h('p', { 'data-testid': 'ai-summary' }, h('strong', {}, 'Summary by the AI: '), aiSummary) : null,
    h('ul', { class: 'plain' }, lines.map((l) => h('li', {}, l))),
    recent.length ? h('p', { class: 'label' }, 'The last turns:') : null,
    recent.length ? h('ul', { class: 'plain summary-turns' }, recent.map((m) => h('li', {}, h('strong', {}, `${fromWords(m)}: `), clip(m.text ?? '(no words: a button)')))) : null,
  ];
}

/** @param {string} text */
function clip(text) {
  const chars = Array.from(text);
  return chars.length > 200 ? `${chars.slice(0, 200).join('')}…` : text;
}

/** @param {string} term @param {import('./dom.js').Child | import('./dom.js').Child[]} value */
function fact(term, value) {
  return h('div', {}, h('dt', {}, term), h('dd', {}, value));
}

/** @param {Message} m @param {() => Promise<void>} retry @param {(() => void) | null} teach opens "Add as an answer" */
function message(m, retry, teach) {
  const who = m.from === 'bot' && m.source ? `Bot, answer from ${SOURCES[m.source] ?? m.source}` : m.from === 'agent' ? `${fromWords(m)} (team)` : fromWords(m);
  const status = m.from === 'agent' ? m.status ?? 'sent' : null;
  /** @type {HTMLButtonElement | null} */
  let again = null;
  if (status === 'failed') {
    const b = h('button', { type: 'button', class: 'quiet' }, 'Retry');
    b.addEventListener('click', () => void busy(b, retry));
    again = b;
  }
  return h('li', { class: `msg from-${m.from}`, 'data-message': m.id },
    h('p', { class: 'msg-head' }, h('strong', {}, who), ' ', h('span', { class: 'meta' }, when(m.at))),
    h('p', { class: 'msg-text' }, m.text ?? h('em', {}, 'asked for the team (a button, no words)')),
    status ? h('p', { class: `delivery ${status}`, 'data-testid': 'delivery' }, DELIVERY[status] ?? status,
      status === 'failed' && m.failure?.reason ? `: ${m.failure.reason}` : null) : null,
    again,
    teach ? h('button', { type: 'button', class: 'quiet', onclick: teach, 'aria-label': 'Add as an answer: this reply, to the customer’s question before it' }, 'Add as an answer') : null);
}
