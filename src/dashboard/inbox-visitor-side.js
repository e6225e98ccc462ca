// @ts-check
/**
 * The visitor's side in a conversation (docs/webchat.md, "Typing, satisfaction and email"): "Visitor is typing…" from
 * the session's live stream, the agent's own typing sent to the widget (at most every few seconds), the question
 * before Close (a modal <dialog> that takes the focus and gives it back), and the satisfaction answer as a line.
 */
import { api } from './api.js';
import { h } from './dom.js';

/** A typing sign is sent at most this often while the agent types (the API keeps one for 6 s). */
const TYPING_EVERY_MS = 3_000;

/** "Visitor is typing…" while the stream's latest `typing` event lasts. */
export function visitorTyping() {
  const el = h('p', { class: 'hint typing', role: 'status', 'data-testid': 'visitor-typing' });
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  return {
    el,
    /** @param {unknown} event the stream's `typing` event: `{until}` */
    show(event) {
      const until = event && typeof event === 'object' && 'until' in event ? event.until : undefined;
      const ms = until ? new Date(String(until)).getTime() - Date.now() : 6_000;
      if (!(ms > 0)) return;
      el.textContent = 'Visitor is typing…';
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => (el.textContent = ''), ms);
    },
    /** A message came: whoever typed has sent it. */
    clear() {
      if (timer) clearTimeout(timer);
      timer = null;
      el.textContent = '';
    },
  };
}

/**
 * Sends the holder's typing to the widget while keys are pressed (POST /v1/sessions/{id}/typing): `input` for the
 * reply box's input events, `sent` once a message went. The message ends the sign the widget shows, so the next key
 * sends one at once: with the wait of the last sign kept, the next reply typed within 3 s showed no sign (or a late one).
 * @param {string} id @param {() => boolean} isNote notes are never shown to the customer
 */
export function agentTyping(id, isNote) {
  let last = 0;
  return {
    input() {
      if (isNote() || Date.now() - last < TYPING_EVERY_MS) return;
      last = Date.now();
      api('POST', `/v1/sessions/${encodeURIComponent(id)}/typing`).catch(() => undefined);
    },
    sent() {
      last = 0;
    },
  };
}

/**
 * Asks before closing: a modal dialog; resolves true for Close. Escape and Cancel keep the conversation open, and the
 * focus goes back to the button that asked.
 * @param {HTMLElement | null} [returnTo]
 * @returns {Promise<boolean>}
 */
export function confirmClose(returnTo) {
  return new Promise((resolve) => {
    const title = h('h2', { id: 'close-title' }, 'Close this conversation?');
    const cancel = h('button', { type: 'button', class: 'quiet', value: 'cancel' }, 'Cancel');
    const close = h('button', { type: 'button', class: 'danger', value: 'close', 'data-testid': 'confirm-close' }, 'Close conversation');
    const dialog = h('dialog', { class: 'confirm', 'aria-labelledby': 'close-title', 'aria-describedby': 'close-text' },
      title,
      h('p', { id: 'close-text' }, 'The customer is told the conversation is closed and asked how it went. The bot answers whatever they write next.'),
      h('div', { class: 'row' }, close, cancel));
    /** @param {boolean} answer */
    const done = (answer) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
      // After the button's own busy state ends (it is disabled while its work runs, and a disabled button takes no focus).
      setTimeout(() => returnTo?.isConnected && returnTo.focus(), 0);
    };
    cancel.addEventListener('click', () => done(false));
    close.addEventListener('click', () => done(true));
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    // The safe answer has the focus: Enter does not close by accident.
    cancel.focus();
  });
}

/**
 * The satisfaction answer as a line for the facts.
 * @param {import('./api-types').GetSessionsId['satisfaction']} answer
 */
export function satisfactionWords(answer) {
  if (!answer) return null;
  const words = ['bad', 'poor', 'OK', 'good', 'very good'][(answer.score ?? 0) - 1] ?? '';
  return h('span', { 'data-testid': 'satisfaction' }, `${answer.score} of 5 (${words})`, answer.comment ? `: “${answer.comment}”` : '');
}
