// @ts-check
// Over 500 lines: a dependency-free script a shop embeds with one tag, served as one file (no build step splits it).
/**
 * The website chat widget (docs/webchat.md, "The widget"): plain browser JavaScript, served as is by GET /widget.js
 * (src/http/pages/widget.ts) and embedded by a shop as
 *   <script src="https://botlink.example/widget.js" data-key="blw_…" async></script>
 *
 * - The API is the origin of this script's own src; the widget key goes in X-Widget-Key.
 * - Everything lives in a Shadow DOM: the shop's CSS cannot reach in, ours cannot leak out. Styles are a constructed
 *   stylesheet (adoptedStyleSheets), which a page's Content-Security-Policy does not block as it blocks <style>.
 * - Text from anywhere (replies, the visitor's words, error messages) is only ever set with textContent: no HTML
 *   parsing anywhere in this file.
 * - The conversation id, the visitor token and the transcript are kept in localStorage (this browser, on the shop's
 *   site), so the conversation survives page loads, and a visitor who comes back later finds the team's replies.
 * - The team's replies arrive by a long poll (GET …/messages?after=…&wait=…) while a conversation exists. Every
 *   request about the conversation after its start (the poll, the next message, the lead, the call for the team)
 *   carries the visitor token the start answered, in X-Visitor-Token: without it the API answers 404.
 */
(function botlinkWidget() {
  'use strict';

  /** Set while this script runs (also for async scripts); the fallback finds the tag by its attribute. */
  const script = /** @type {HTMLScriptElement | null} */ (document.currentScript ?? document.querySelector('script[data-key][src*="widget.js"]'));
  if (!script) return;
  const widgetKey = (script.dataset.key ?? '').trim();
  if (!widgetKey) {
    console.warn('Botlink chat: the script tag needs data-key="<widget key>".');
    return;
  }
  // One widget per page, however often the tag was pasted.
  const loaded = Symbol.for('botlink-chat');
  const marks = /** @type {Record<symbol, boolean>} */ (/** @type {unknown} */ (window));
  if (marks[loaded]) return;
  marks[loaded] = true;
  const apiBase = `${new URL(script.src, document.baseURI).origin}/v1/webchat`;
  /** One stored conversation per widget key, so two widgets on one site never mix. */
  const STORAGE_KEY = `botlink-chat:${widgetKey.slice(-8)}`;
  /** Transcript entries kept across page loads (the oldest are dropped). */
  const MAX_STORED_ENTRIES = 100;
  /** The API's limits (docs/webchat.md, Limits). */
  const MAX_MESSAGE_CHARS = 2000;
  const MAX_PAGE_URL_CHARS = 2048;
  /** The long poll's wait (the API allows up to 25 s), and the pause after a failed poll. */
  const POLL_WAIT_SECONDS = 25;
  const POLL_RETRY_MS = 5000;
  /** Bot replies shown from an answer and not yet seen in the poll (so that the poll does not show them twice). */
  const MAX_PENDING_REPLIES = 20;
  /** A typing sign is sent at most this often while the visitor types (the API keeps one for 6 s). */
  const TYPING_EVERY_MS = 3000;
  /** The API's pattern for `language` (src/http/routes/webchat.ts). */
  const LANGUAGE_TAG = /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*$/;

  /**
   * @typedef {'visitor' | 'bot' | 'agent' | 'notice'} Author
   * @typedef {{ from: Author, text: string, name?: string }} Entry
   * @typedef {{ conversationId: string | null, visitorToken: string | null, lastMessageId: string | null, pendingReplies: string[],
   *   transcript: Entry[], open: boolean, leadSent: boolean, formOffered: boolean, surveyDone: boolean }} Stored
   */

  /** @returns {Stored} */
  function load() {
    const empty = {
      conversationId: null, visitorToken: null, lastMessageId: null, pendingReplies: [], transcript: [],
      open: false, leadSent: false, formOffered: false, surveyDone: false,
    };
    try {
      const raw = window.localStorage.getItem(STORAGE_KEY);
      if (!raw) return empty;
      const value = JSON.parse(raw);
      const transcript = Array.isArray(value.transcript)
        ? value.transcript
          .filter((/** @type {any} */ e) => e && typeof e.text === 'string' && ['visitor', 'bot', 'agent', 'notice'].includes(e.from))
          .map((/** @type {any} */ e) => ({ from: e.from, text: e.text, ...(typeof e.name === 'string' ? { name: e.name } : {}) }))
        : [];
      const text = (/** @type {unknown} */ v) => (typeof v === 'string' ? v : null);
      return {
        conversationId: text(value.conversationId),
        visitorToken: text(value.visitorToken),
        lastMessageId: text(value.lastMessageId),
        pendingReplies: Array.isArray(value.pendingReplies) ? value.pendingReplies.filter((/** @type {unknown} */ r) => typeof r === 'string') : [],
        transcript,
        open: value.open === true,
        leadSent: value.leadSent === true,
        formOffered: value.formOffered === true,
        surveyDone: value.surveyDone === true,
      };
    } catch {
      // Storage may be off (private modes, a site's policy) or hold something else: start afresh.
      return empty;
    }
  }

  const state = load();

  function save() {
    try {
      state.transcript = state.transcript.slice(-MAX_STORED_ENTRIES);
      state.pendingReplies = state.pendingReplies.slice(-MAX_PENDING_REPLIES);
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(state));
    } catch {
      // Without storage the conversation lasts for this page only.
    }
  }

  // ---- DOM helpers: elements and text only ------------------------------------------------------------------------

  /**
   * @template {keyof HTMLElementTagNameMap} K
   * @param {K} tag
   * @param {Record<string, string>} [attributes]
   * @param {string} [text]
   * @returns {HTMLElementTagNameMap[K]}
   */
  function el(tag, attributes = {}, text) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  let idCounter = 0;
  /** @param {string} base */
  const uniqueId = (base) => `botlink-${base}-${++idCounter}`;

  // ---- Styles ------------------------------------------------------------------------------------------------------

  // Colours chosen for contrast (WCAG AA): #0b5394 and white 7.8:1 either way; #1f2328 on #f2f4f7 14:1; the focus
  // ring #b35900 4.8:1 on white (white on the blue header); field borders #6e7781 4.5:1.
  const CSS = `
:host { all: initial; }
* { box-sizing: border-box; }
.root { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1f2328; }
button, input, textarea { font: inherit; }
button { cursor: pointer; }
:focus-visible { outline: 3px solid #b35900; outline-offset: 2px; }
.launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; border: 2px solid #ffffff; border-radius: 999px;
  background: #0b5394; color: #ffffff; padding: 12px 20px; font-weight: 600; box-shadow: 0 4px 14px rgba(0,0,0,.25); }
.launcher:hover { background: #08406f; }
.panel { position: fixed; right: 20px; bottom: 84px; z-index: 2147483001; width: 370px; height: min(600px, calc(100vh - 110px));
  display: flex; flex-direction: column; background: #ffffff; border: 1px solid #8c959f; border-radius: 12px;
  box-shadow: 0 10px 30px rgba(0,0,0,.25); overflow: hidden; }
.panel[hidden] { display: none; }
.header { display: flex; align-items: center; justify-content: space-between; gap: 8px; padding: 10px 12px 10px 16px; background: #0b5394; color: #ffffff; }
.title { margin: 0; font-size: 16px; font-weight: 600; }
.close { border: 0; background: transparent; color: #ffffff; font-size: 22px; line-height: 1; padding: 6px 10px; border-radius: 6px; }
.close:focus-visible { outline-color: #ffffff; outline-offset: -3px; }
.panel > * { flex: none; }
.panel > .log { flex: 1 1 auto; min-height: 60px; overflow-y: auto; margin: 0; padding: 12px; list-style: none; display: flex; flex-direction: column; gap: 8px; }
.msg { max-width: 85%; padding: 8px 12px; border-radius: 12px; white-space: pre-wrap; overflow-wrap: anywhere; }
.msg.visitor { align-self: flex-end; background: #0b5394; color: #ffffff; }
.msg.bot { align-self: flex-start; background: #f2f4f7; color: #1f2328; }
.msg.agent { align-self: flex-start; background: #e6f4ea; color: #0d3b1e; border: 1px solid #8cc59c; }
.msg .name { display: block; font-size: 13px; font-weight: 600; }
.msg.notice { align-self: stretch; max-width: none; background: #fff8c5; color: #3b2300; border: 1px solid #d4a72c; font-size: 14px; }
.sr-only { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.status { min-height: 1.45em; margin: 0; padding: 0 12px; font-size: 13px; color: #57606a; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; padding: 4px 12px 8px; }
.actions[hidden], .lead[hidden] { display: none; }
.secondary { border: 1px solid #0b5394; background: #ffffff; color: #0b5394; border-radius: 999px; padding: 6px 12px; font-size: 14px; }
.secondary:hover { background: #eaf2fb; }
.primary { border: 0; background: #0b5394; color: #ffffff; border-radius: 8px; padding: 8px 14px; font-weight: 600; }
.primary:hover { background: #08406f; }
button:disabled { opacity: .6; cursor: default; }
.lead { display: grid; gap: 6px; padding: 10px 12px; border-top: 1px solid #d0d7de; background: #f6f8fa; }
.lead label { font-size: 14px; font-weight: 600; }
.lead input, .compose textarea { width: 100%; border: 1px solid #6e7781; border-radius: 8px; padding: 8px 10px; color: #1f2328; background: #ffffff; }
.lead .buttons { display: flex; gap: 8px; margin-top: 4px; }
.typing { min-height: 1.45em; margin: 0; padding: 0 12px; font-size: 13px; font-style: italic; color: #57606a; }
.survey { display: grid; gap: 8px; padding: 10px 12px; border-top: 1px solid #d0d7de; background: #f6f8fa; }
.survey[hidden] { display: none; }
.survey fieldset { border: 0; margin: 0; padding: 0; }
.survey legend { font-size: 14px; font-weight: 600; padding: 0; margin-bottom: 6px; }
.survey .scores { display: flex; gap: 6px; }
.survey .scores label { flex: 1; display: grid; justify-items: center; gap: 2px; padding: 6px 0; border: 1px solid #6e7781; border-radius: 8px; background: #ffffff;
  font-size: 13px; cursor: pointer; }
.survey .scores input { margin: 0; accent-color: #0b5394; }
.survey .scores label:has(input:checked) { border-color: #0b5394; background: #eaf2fb; }
.survey textarea { width: 100%; border: 1px solid #6e7781; border-radius: 8px; padding: 6px 10px; color: #1f2328; background: #ffffff; resize: none; }
.survey .field { display: grid; gap: 4px; font-size: 14px; }
.compose { display: flex; gap: 8px; align-items: flex-end; padding: 10px 12px; border-top: 1px solid #d0d7de; }
.compose textarea { resize: none; min-height: 42px; max-height: 120px; }
@media (max-width: 480px) {
  .panel { left: 0; right: 0; top: 0; bottom: 0; width: 100%; height: 100%; border-radius: 0; border: 0; }
  /* 16px keeps phones from zooming into a field. */
  .lead input, .compose textarea { font-size: 16px; }
  .launcher { right: 12px; bottom: 12px; }
}
@media (prefers-reduced-motion: no-preference) { .launcher { transition: background .15s; } }
`;

  /** @param {ShadowRoot} root */
  function applyStyles(root) {
    if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(CSS);
      root.adoptedStyleSheets = [sheet];
    } else {
      root.append(el('style', {}, CSS));
    }
  }

  // ---- The widget ----------------------------------------------------------------------------------------------------

  const host = document.createElement('botlink-chat');
  // The host itself is in the shop's DOM: its own styles are reset through the CSSOM (allowed under any CSP).
  host.style.setProperty('all', 'initial', 'important');
  host.style.setProperty('display', 'block', 'important');
  const shadow = host.attachShadow({ mode: 'open' });
  applyStyles(shadow);

  const root = el('div', { class: 'root' });
  const panelId = uniqueId('panel');
  const titleId = uniqueId('title');
  const launcher = el('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': panelId }, 'Chat with us');

  const panel = el('div', { id: panelId, class: 'panel', role: 'dialog', 'aria-labelledby': titleId, hidden: '' });
  const header = el('div', { class: 'header' });
  const title = el('h2', { id: titleId, class: 'title' }, 'Chat with us');
  const closeButton = el('button', { type: 'button', class: 'close', 'aria-label': 'Close chat' }, '×');
  header.append(title, closeButton);

  // role=log is a polite live region: screen readers announce each new message. Its messages are plain blocks: a
  // list's items would sit outside any list, since the role replaces the list's own. It scrolls, so it takes the
  // focus (tabindex 0) for keyboard users to scroll it.
  const log = el('div', { class: 'log', role: 'log', 'aria-live': 'polite', 'aria-label': 'Messages', tabindex: '0' });
  const status = el('p', { class: 'status', role: 'status' });

  const actions = el('div', { class: 'actions' });
  const escalateButton = el('button', { type: 'button', class: 'secondary' }, 'Talk to the team');
  const leadToggle = el('button', { type: 'button', class: 'secondary', 'aria-expanded': 'false' }, 'Leave your details');
  actions.append(escalateButton, leadToggle);

  const leadForm = el('form', { id: uniqueId('lead'), class: 'lead', hidden: '', 'aria-label': 'Your contact details' });
  leadToggle.setAttribute('aria-controls', leadForm.id);
  /**
   * @param {string} label
   * @param {Record<string, string>} attributes
   */
  const field = (label, attributes) => {
    const input = el('input', { id: uniqueId('field'), ...attributes });
    leadForm.append(el('label', { for: input.id }, label), input);
    return input;
  };
  const nameInput = field('Name', { type: 'text', name: 'name', autocomplete: 'name', required: '', maxlength: '120' });
  const emailInput = field('Email', { type: 'email', name: 'email', autocomplete: 'email', required: '', maxlength: '254' });
  const phoneInput = field('Phone (optional)', { type: 'tel', name: 'phone', autocomplete: 'tel', maxlength: '32' });
  const leadButtons = el('div', { class: 'buttons' });
  const leadSubmit = el('button', { type: 'submit', class: 'primary' }, 'Send my details');
  const leadCancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
  leadButtons.append(leadSubmit, leadCancel);
  leadForm.append(leadButtons);

  // "… is typing": a polite status of its own, so the announcement of a message is not cut by it.
  const typingLine = el('p', { class: 'typing', role: 'status', 'aria-live': 'polite' });

  // The one satisfaction question after a colleague closed the conversation: a radio group of 1 to 5 and a comment.
  const survey = el('form', { class: 'survey', hidden: '', 'aria-label': 'Rate this conversation' });
  const scores = el('fieldset');
  scores.append(el('legend', {}, 'How was this conversation? (1 = bad, 5 = very good)'));
  const scoreRow = el('div', { class: 'scores' });
  const SCORE_WORDS = ['Bad', 'Poor', 'OK', 'Good', 'Very good'];
  /** @type {HTMLInputElement[]} */
  const scoreInputs = SCORE_WORDS.map((word, i) => {
    const input = el('input', { type: 'radio', name: 'score', value: String(i + 1), 'aria-label': `${i + 1}: ${word}`, required: '' });
    const label = el('label');
    label.append(input, el('span', { 'aria-hidden': 'true' }, String(i + 1)));
    scoreRow.append(label);
    return input;
  });
  scores.append(scoreRow);
  const commentInput = el('textarea', { id: uniqueId('comment'), rows: '2', maxlength: '500' });
  const commentField = el('div', { class: 'field' });
  commentField.append(el('label', { for: commentInput.id }, 'Anything to add? (optional)'), commentInput);
  const surveyButtons = el('div', { class: 'buttons' });
  const surveySubmit = el('button', { type: 'submit', class: 'primary' }, 'Send rating');
  surveyButtons.append(surveySubmit);
  survey.append(scores, commentField, surveyButtons);

  const compose = el('form', { class: 'compose' });
  const messageInput = el('textarea', { id: uniqueId('message'), rows: '1', maxlength: String(MAX_MESSAGE_CHARS), placeholder: 'Type your question…' });
  const messageLabel = el('label', { for: messageInput.id, class: 'sr-only' }, 'Your message');
  const sendButton = el('button', { type: 'submit', class: 'primary' }, 'Send');
  compose.append(messageLabel, messageInput, sendButton);

  panel.append(header, log, typingLine, status, actions, leadForm, survey, compose);
  root.append(launcher, panel);
  shadow.append(root);

  // ---- Transcript --------------------------------------------------------------------------------------------------

  const GREETING = 'Hi! Ask us anything about our shop.';

  /**
   * @param {Entry} entry
   * @returns {HTMLDivElement}
   */
  function render(entry) {
    const item = el('div', { class: `msg ${entry.from}` });
    if (entry.from === 'agent') {
      // A colleague's reply carries their name, seen and heard.
      item.append(el('span', { class: 'name' }, entry.name ? `${entry.name}, from the team` : 'From the team'), el('span', { class: 'sr-only' }, ': '));
    } else {
      const label = entry.from === 'visitor' ? 'You' : entry.from === 'bot' ? 'Shop' : 'Notice';
      item.append(el('span', { class: 'sr-only' }, `${label}: `));
    }
    item.append(document.createTextNode(entry.text));
    log.append(item);
    log.scrollTop = log.scrollHeight;
    return item;
  }

  /**
   * @param {Author} from
   * @param {string} text
   * @param {{ keep?: boolean, name?: string }} [options] notices of a passing problem are shown but not stored
   * @returns {() => void} takes the entry back (a message that could not be sent)
   */
  function add(from, text, options = {}) {
    /** @type {Entry} */
    const entry = { from, text, ...(options.name ? { name: options.name } : {}) };
    if (options.keep !== false) {
      state.transcript.push(entry);
      save();
    }
    const item = render(entry);
    return () => {
      item.remove();
      state.transcript = state.transcript.filter((e) => e !== entry);
      save();
    };
  }

  function refreshActions() {
    actions.hidden = state.conversationId === null;
    leadToggle.textContent = state.leadSent ? 'Update your details' : 'Leave your details';
  }

  render({ from: 'bot', text: GREETING });
  for (const entry of state.transcript) render(entry);
  refreshActions();

  // ---- The API -----------------------------------------------------------------------------------------------------

  class ChatError extends Error {
    /**
     * @param {string} message for the visitor
     * @param {number} status the HTTP status, 0 when no answer could be read
     * @param {number} [retryAfterMs] the answer's Retry-After, 0 when it had none
     */
    constructor(message, status, retryAfterMs = 0) {
      super(message);
      this.status = status;
      this.retryAfterMs = retryAfterMs;
    }
  }

  /**
   * POST a JSON body to the widget API; the parsed answer, or a ChatError with a sentence for the visitor.
   * @param {string} path below /v1/webchat
   * @param {Record<string, unknown>} body
   * @returns {Promise<any>}
   */
  async function post(path, body) {
    /** @type {Record<string, string>} */
    const headers = { 'Content-Type': 'application/json', 'X-Widget-Key': widgetKey };
    // The conversation's own key: its writes need it as its reads do (a new conversation has none yet).
    if (path !== '/conversations' && state.visitorToken) headers['X-Visitor-Token'] = state.visitorToken;
    let res;
    try {
      res = await fetch(apiBase + path, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        credentials: 'omit',
        mode: 'cors',
      });
    } catch {
      // A refused origin answers without CORS headers, which the browser reports exactly like a network failure.
      console.warn(`Botlink chat: no readable answer from ${apiBase}. If this persists, check that ${location.origin} is among the sites of Website chat on the Botlink dashboard's Channels screen.`);
      throw new ChatError('The chat could not be reached. Please check your connection and try again in a moment.', 0);
    }
    /** @type {any} */
    const answer = await res.json().catch(() => null);
    if (res.ok) return answer;
    const serverMessage = typeof answer?.error?.message === 'string' ? answer.error.message : '';
    const switchedOff = answer?.error?.details?.reason === 'switched_off';
    throw new ChatError(switchedOff ? 'The chat is closed right now. Please contact the shop another way.' : explain(res.status, res.headers.get('Retry-After'), serverMessage), res.status);
  }

  /**
   * GET the conversation's messages after the last one shown, waiting up to POLL_WAIT_SECONDS for a newer one.
   * @param {string} conversationId
   * @param {string} visitorToken
   * @returns {Promise<{ messages: { id: string, from: string, text: string, agent_name?: string }[], handled_by: string, typing?: string | null,
   *   survey?: string | null }>}
   */
  async function newMessages(conversationId, visitorToken) {
    const query = new URLSearchParams({ wait: String(POLL_WAIT_SECONDS) });
    if (state.lastMessageId) query.set('after', state.lastMessageId);
    let res;
    try {
      res = await fetch(`${apiBase}/conversations/${encodeURIComponent(conversationId)}/messages?${query}`, {
        headers: { 'X-Widget-Key': widgetKey, 'X-Visitor-Token': visitorToken },
        credentials: 'omit',
        mode: 'cors',
        cache: 'no-store',
      });
    } catch {
      throw new ChatError('', 0);
    }
    const answer = await res.json().catch(() => null);
    if (!res.ok || !answer || !Array.isArray(answer.messages)) throw new ChatError('', res.status, 1000 * (Number(res.headers.get('Retry-After')) || 0));
    return answer;
  }

  /**
   * A readable sentence for a failed request.
   * @param {number} status
   * @param {string | null} retryAfter seconds
   * @param {string} serverMessage the API's own message (docs/webchat.md; it never contains secrets)
   */
  function explain(status, retryAfter, serverMessage) {
    switch (status) {
      case 400:
        return serverMessage ? `That could not be sent: ${serverMessage}` : 'That could not be sent; please check what you typed.';
      case 401:
        return 'This chat is not set up correctly (its key is not valid). Please contact the shop another way.';
      case 403:
        console.warn(`Botlink chat: ${serverMessage}`);
        return `This chat is not switched on for ${location.origin} yet. Please contact the shop another way.`;
      case 404:
        return 'This conversation has ended. Your next message starts a new one.';
      case 429: {
        const seconds = Number(retryAfter);
        const wait = Number.isFinite(seconds) && seconds > 0 ? `${Math.ceil(seconds)} second${Math.ceil(seconds) === 1 ? '' : 's'}` : 'a moment';
        return `Too many messages at once. Please try again in ${wait}.`;
      }
      default:
        return status >= 500 ? 'Something went wrong on our side. Please try again in a moment.' : `The chat answered with an error (${status}).`;
    }
  }

  /**
   * The page the chat is on, within the API's limit (an http(s) URL), without its query string and fragment: sign-in
   * flows, order pages and campaigns keep tokens and ids there, and page_url is stored and sent on in webhooks.
   */
  function pageUrl() {
    return (location.origin + location.pathname).slice(0, MAX_PAGE_URL_CHARS);
  }

  /**
   * The page's own language (`<html lang="nl">`) when it has one: the shop's knowledge base is written in it, which
   * says more than the visitor's browser does (the API falls back to Accept-Language).
   * @returns {{ language?: string }}
   */
  function pageLanguage() {
    const lang = document.documentElement.lang.trim();
    return LANGUAGE_TAG.test(lang) ? { language: lang } : {};
  }
  /** The browser's IANA time zone (optional): the team sees the visitor's local time beside the conversation. */
  const browserTimeZone = () => { const zone = Intl.DateTimeFormat().resolvedOptions().timeZone; return zone && zone.length <= 64 && /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone) ? { time_zone: zone } : {}; };

  let busy = false;
  /** @type {(() => void)[]} */
  let whenIdle = [];
  /** Resolves when no message of the visitor is on its way (its answer is shown first, then what the poll brought). */
  const idle = () => (busy ? new Promise((resolve) => whenIdle.push(() => resolve(undefined))) : Promise.resolve());
  /** @param {boolean} value */
  function setBusy(value) {
    busy = value;
    if (!value) {
      const waiting = whenIdle;
      whenIdle = [];
      for (const wake of waiting) wake();
    }
    sendButton.disabled = value;
    surveySubmit.disabled = value;
    escalateButton.disabled = value;
    leadSubmit.disabled = value;
    status.textContent = value ? 'Sending…' : '';
  }

  /** @param {unknown} err */
  function showError(err) {
    const text = err instanceof ChatError ? err.message : 'Something went wrong. Please try again.';
    if (err instanceof ChatError && err.status === 404) {
      forget();
      refreshActions();
    }
    add('notice', text, { keep: false });
  }

  /** The conversation ended (or is unknown): the next message starts a new one. The transcript stays. */
  function forget() {
    state.conversationId = null;
    state.visitorToken = null;
    state.lastMessageId = null;
    state.pendingReplies = [];
    save();
    refreshActions();
  }

  /** A bot reply from an answer: shown now, and remembered so that the poll does not show it again. @param {string} text */
  function addReply(text) {
    add('bot', text);
    state.pendingReplies.push(text);
    save();
  }

  let polling = false;
  /**
   * The team's replies (and the bot's sentences nobody asked for, like a hand-back's) while a conversation exists: a
   * long poll, one request at a time, after the last message shown. The visitor's own messages and the replies already
   * shown from an answer are skipped.
   */
  async function poll() {
    if (polling) return;
    polling = true;
    try {
      while (state.conversationId !== null && state.visitorToken !== null) {
        const conversationId = state.conversationId;
        let answer;
        try {
          answer = await newMessages(conversationId, state.visitorToken);
        } catch (err) {
          const code = err instanceof ChatError ? err.status : 0;
          // 404: ended, or not this visitor's; 400: the last message shown is not known (start from the beginning);
          // 401 and 403: this page may not use the chat now (the next message says why, and polls again).
          if (code === 404 && state.conversationId === conversationId) forget();
          else if (code === 400) state.lastMessageId = null;
          else if (code === 401 || code === 403) return;
          // Otherwise a pause: at least the one a 429 asks for (too many polls of this conversation, as with several tabs).
          else await new Promise((resolve) => setTimeout(resolve, Math.max(POLL_RETRY_MS, err instanceof ChatError ? err.retryAfterMs : 0)));
          continue;
        }
        await idle();
        if (state.conversationId !== conversationId) continue;
        for (const m of answer.messages) {
          if (typeof m.text !== 'string') continue;
          if (m.from === 'agent') add('agent', m.text, typeof m.agent_name === 'string' ? { name: m.agent_name } : {});
          else if (m.from === 'bot') {
            const shown = state.pendingReplies.indexOf(m.text);
            if (shown >= 0) state.pendingReplies.splice(shown, 1);
            else add('bot', m.text);
          }
        }
        const last = answer.messages[answer.messages.length - 1];
        if (last) {
          state.lastMessageId = last.id;
          save();
        }
        visitorSide(answer);
      }
    } finally {
      polling = false;
    }
  }

  // ---- The visitor's side: typing both ways, the details form on a handoff, the survey ------------------------------

  /** Who handles the conversation, as the last poll said. */
  let handledBy = 'bot';

  /** The name of the colleague who wrote last, for "… is typing". */
  function agentName() {
    for (let i = state.transcript.length - 1; i >= 0; i--) {
      const entry = state.transcript[i];
      if (entry && entry.from === 'agent' && entry.name) return entry.name;
    }
    return null;
  }

  /**
   * What a poll says besides messages: a colleague typing, a person asked for (in words too: the details form is
   * offered once, as the button does), and the question after a colleague closed the conversation.
   * @param {{ handled_by: string, typing?: string | null, survey?: string | null }} answer
   */
  function visitorSide(answer) {
    handledBy = answer.handled_by;
    const name = agentName();
    const typing = answer.typing === 'agent' ? `${name ?? 'Someone from the team'} is typing…` : '';
    if (typingLine.textContent !== typing) typingLine.textContent = typing;
    if (handledBy === 'waiting' && !state.leadSent && !state.formOffered) {
      state.formOffered = true;
      save();
      if (leadForm.hidden) {
        openLeadForm({ focus: false });
        status.textContent = 'Leave your details so the team can reach you if you have to go.';
      }
    }
    if (answer.survey === 'ask' && !state.surveyDone && survey.hidden) {
      survey.hidden = false;
      log.scrollTop = log.scrollHeight;
    } else if (answer.survey === 'answered' && !survey.hidden) {
      survey.hidden = true;
    }
  }

  let lastTypingSent = 0;
  /** The visitor types: the colleague who holds (or is about to take) the conversation sees it, at most every few seconds. */
  function typed() {
    if (state.conversationId === null || handledBy === 'bot' || Date.now() - lastTypingSent < TYPING_EVERY_MS) return;
    lastTypingSent = Date.now();
    post(`/conversations/${encodeURIComponent(state.conversationId)}/typing`, {}).catch(() => undefined);
  }

  async function sendSurvey() {
    const checked = scoreInputs.find((input) => input.checked);
    if (state.conversationId === null || !checked || busy) return;
    const comment = commentInput.value.trim();
    setBusy(true);
    try {
      await post(`/conversations/${encodeURIComponent(state.conversationId)}/satisfaction`, { score: Number(checked.value), ...(comment ? { comment } : {}) });
      state.surveyDone = true;
      save();
      survey.hidden = true;
      add('notice', 'Thank you for your feedback!');
      messageInput.focus();
    } catch (err) {
      // Answered already (another tab): nothing more to ask.
      if (err instanceof ChatError && err.status === 409) {
        state.surveyDone = true;
        survey.hidden = true;
        save();
      } else {
        showError(err);
      }
    } finally {
      setBusy(false);
    }
  }

  /** @param {string} text */
  async function send(text) {
    const takeBack = add('visitor', text);
    // What was typed is sent: the first key of the next message shows a sign at once.
    lastTypingSent = 0;
    setBusy(true);
    try {
      if (state.conversationId === null) {
        const started = await post('/conversations', { visitor_message: text, page_url: pageUrl(), ...pageLanguage(), ...browserTimeZone() });
        state.conversationId = started.conversation_id;
        state.visitorToken = typeof started.visitor_token === 'string' ? started.visitor_token : null;
        state.formOffered = false;
        state.surveyDone = false;
        survey.hidden = true;
        state.lastMessageId = null;
        state.pendingReplies = [];
        save();
        refreshActions();
        if (typeof started.reply === 'string') addReply(started.reply);
        void poll();
      } else {
        const answered = await post(`/conversations/${encodeURIComponent(state.conversationId)}/messages`, { message: text, ...pageLanguage() });
        // null: a newer message of this visitor replaced this turn, and its request carries the answer.
        if (typeof answered.reply === 'string') addReply(answered.reply);
        void poll();
      }
    } catch (err) {
      // Not sent: the words go back into the box, to send again.
      takeBack();
      if (!messageInput.value) messageInput.value = text;
      showError(err);
    } finally {
      setBusy(false);
    }
  }

  async function escalate() {
    if (state.conversationId === null || busy) return;
    setBusy(true);
    try {
      const answered = await post(`/conversations/${encodeURIComponent(state.conversationId)}/escalate`, {});
      if (typeof answered.reply === 'string') addReply(answered.reply);
      // The team follows up through the contact details, so offer the form next (docs/webchat.md).
      if (!state.leadSent) openLeadForm();
    } catch (err) {
      showError(err);
    } finally {
      setBusy(false);
    }
  }

  async function sendLead() {
    if (state.conversationId === null || busy) return;
    const phone = phoneInput.value.trim();
    setBusy(true);
    try {
      await post(`/conversations/${encodeURIComponent(state.conversationId)}/lead`, {
        name: nameInput.value.trim(),
        email: emailInput.value.trim(),
        ...(phone ? { phone } : {}),
      });
      state.leadSent = true;
      add('notice', 'Thank you! The team has your details and will get back to you.');
      closeLeadForm();
      refreshActions();
      messageInput.focus();
    } catch (err) {
      showError(err);
    } finally {
      setBusy(false);
    }
  }

  // ---- Opening, closing, keyboard ----------------------------------------------------------------------------------

  /** @param {{ focus?: boolean }} [options] */
  function openLeadForm(options = {}) {
    leadForm.hidden = false;
    leadToggle.setAttribute('aria-expanded', 'true');
    // The log shrinks to make room: keep its latest message in view.
    log.scrollTop = log.scrollHeight;
    if (options.focus !== false) nameInput.focus();
  }

  function closeLeadForm() {
    leadForm.hidden = true;
    leadToggle.setAttribute('aria-expanded', 'false');
  }

  /** Below this width the panel covers the page (see the CSS), so it behaves as a modal dialog. */
  const fullScreen = window.matchMedia('(max-width: 480px)');

  /**
   * Tab from the last control goes to the first and back: the page behind a full-screen panel cannot be seen.
   * @param {KeyboardEvent} event
   */
  function keepFocusInPanel(event) {
    /** @type {NodeListOf<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>} */
    const all = panel.querySelectorAll('button, input, textarea');
    const controls = [...all].filter((c) => !c.disabled && c.getClientRects().length > 0);
    const first = controls[0];
    const last = controls[controls.length - 1];
    if (!first || !last) return;
    const active = shadow.activeElement;
    if (event.shiftKey ? active === first || !panel.contains(active) : active === last) {
      event.preventDefault();
      (event.shiftKey ? last : first).focus();
    }
  }

  /** @param {{ focus?: boolean }} [options] */
  function open(options = {}) {
    panel.hidden = false;
    panel.setAttribute('aria-modal', String(fullScreen.matches));
    launcher.setAttribute('aria-expanded', 'true');
    state.open = true;
    save();
    log.scrollTop = log.scrollHeight;
    if (options.focus !== false) messageInput.focus();
  }

  function close() {
    panel.hidden = true;
    launcher.setAttribute('aria-expanded', 'false');
    state.open = false;
    save();
    launcher.focus();
  }

  launcher.addEventListener('click', () => (panel.hidden ? open() : close()));
  closeButton.addEventListener('click', close);
  root.addEventListener('keydown', (event) => {
    if (panel.hidden) return;
    if (event.key === 'Escape') {
      event.stopPropagation();
      close();
    } else if (event.key === 'Tab' && fullScreen.matches) {
      keepFocusInPanel(event);
    }
  });
  escalateButton.addEventListener('click', () => void escalate());
  leadToggle.addEventListener('click', () => (leadForm.hidden ? openLeadForm() : closeLeadForm()));
  leadCancel.addEventListener('click', () => {
    closeLeadForm();
    leadToggle.focus();
  });
  leadForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void sendLead();
  });
  compose.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = messageInput.value.trim();
    if (!text || busy) return;
    messageInput.value = '';
    void send(text.slice(0, MAX_MESSAGE_CHARS));
  });
  messageInput.addEventListener('input', typed);
  survey.addEventListener('submit', (event) => {
    event.preventDefault();
    void sendSurvey();
  });
  // Enter sends, Shift+Enter makes a new line.
  messageInput.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      compose.requestSubmit();
    }
  });

  function mount() {
    document.body.append(host);
    // A conversation that was open on the previous page stays open, without taking the focus from the new page.
    if (state.open) open({ focus: false });
    // Replies the team wrote while the visitor was away, and the ones to come.
    void poll();
  }
  // An async script may run before the body exists.
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount, { once: true });
})();
