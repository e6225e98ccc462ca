// @ts-check
/**
 * Privacy (owners and admins): the audit log (who did what, when, from where), and for owners how long conversations
 * are kept and one customer's data: everything about them as a file, or erased everywhere (docs/privacy.md).
 */
/** @import * as Api from './api-types' */
import { api } from './api.js';
import { busy, errorBox, field, h, loading, replace } from './dom.js';
import { when } from './time.js';

/** What each audit action is, in words people use. @type {Record<string, string>} */
const ACTIONS = {
  sign_in: 'Signed in',
  sign_in_failed: 'Sign-in failed (wrong password)',
  password_set: 'Set a password with an invite link',
  workspace_created: 'Workspace created',
  owner_restored: 'Owner restored by the operator',
  workspace_changed: 'Changed the workspace',
  account_email_changed: 'Changed their sign-in email',
  user_invited: 'Added a user',
  user_renamed: 'Changed a user’s name',
  invite_link_made: 'Made a new invite link',
  user_removed: 'Removed a user',
  token_created: 'Made a token',
  token_revoked: 'Revoked a token',
  integration_changed: 'Changed the integration',
  integration_key_replaced: 'Replaced the integration key',
  integration_removed: 'Removed the integration',
  sync_key_replaced: 'Replaced the sync key',
  webhook_endpoint_set: 'Set a webhook address',
  webhook_secret_rotated: 'Replaced a webhook secret',
  webhook_endpoint_removed: 'Removed a webhook address',
  phone_settings_changed: 'Changed the phone settings',
  whatsapp_settings_changed: 'Changed the WhatsApp settings',
  whatsapp_removed: 'Disconnected WhatsApp',
  webchat_settings_changed: 'Changed the website chat settings',
  team_availability_changed: 'Switched the team on or off',
  inbox_settings_changed: 'Changed the inbox settings',
  conversation_taken_over: 'Took over a conversation',
  conversations_exported: 'Exported conversations',
  retention_changed: 'Changed how long conversations are kept',
  customer_exported: 'Downloaded a customer’s data',
  customer_erased: 'Erased a customer’s data',
  customer_messages_replayed: 'Replayed customer messages to a candidate endpoint',
  knowledge_entry_added_from_conversation: 'Knowledge entry added from a conversation',
};

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderPrivacy(main, ctx) {
  // Signed in with a token the role is not known ('manager'): the owner's parts are shown and the API decides.
  const owner = ctx.session.role === 'owner' || ctx.session.role === 'manager';
  const log = h('ul', { class: 'audit', 'aria-label': 'Audit log entries' });
  const logStatus = h('div', {}, loading('Loading the audit log…'));
  const older = h('button', { type: 'button', class: 'quiet', hidden: true }, 'Show older entries');
  const logError = errorBox();
  replace(main, h('h1', {}, 'Privacy'),
    owner ? h('section', { class: 'card', 'aria-labelledby': 'keep' }, h('h2', { id: 'keep' }, 'How long conversations are kept'), retentionForm()) : null,
    owner ? h('section', { class: 'card', 'aria-labelledby': 'customer' }, h('h2', { id: 'customer' }, 'A customer’s data'), customerForm()) : null,
    h('section', { class: 'card', 'aria-labelledby': 'audit' }, h('h2', { id: 'audit' }, 'Audit log'),
      h('p', { class: 'hint' }, 'Who signed in, changed settings, keys and users, took over conversations, or downloaded or erased a customer’s data. Nobody can change it; entries are kept for two years.'),
      logStatus, log, logError.el, older));
  let stopped = false;
  /** @type {string | null} */
  let before = null;
  async function more() {
    try {
      /** @type {Api.GetAudit} */
      const answer = await api('GET', `/v1/audit?limit=50${before ? `&before=${encodeURIComponent(before)}` : ''}`);
      if (stopped) return;
      replace(logStatus, answer.entries.length === 0 && !before ? h('p', { class: 'empty' }, 'Nothing recorded yet.') : null);
      for (const e of answer.entries) log.append(entry(e));
      before = answer.next_before;
      older.hidden = !before;
    } catch (err) {
      replace(logStatus);
      logError.show(err);
    }
  }
  older.addEventListener('click', () => void busy(older, more));
  void more();
  return () => {
    stopped = true;
  };
}

/** @param {{ at: string, user_email: string | null, ip: string | null, action: string, target: string | null }} e */
function entry(e) {
  return h('li', { class: 'audit-entry' },
    h('strong', {}, ACTIONS[e.action] ?? e.action),
    e.target ? h('span', { class: 'excerpt' }, e.target) : null,
    h('span', {}, e.user_email ?? 'the operator or nobody signed in'),
    h('span', { class: 'hint' }, `${when(e.at)}${e.ip ? ` · from ${e.ip}` : ''}`));
}

function retentionForm() {
  const forever = h('input', { type: 'checkbox' });
  const days = h('input', { type: 'number', min: 1, max: 3650, step: 1, inputmode: 'numeric', value: 365 });
  const error = errorBox();
  const saved = h('p', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'submit' }, 'Save');
  const form = h('form', { 'aria-label': 'How long conversations are kept' },
    h('p', { class: 'hint' }, 'What customers said, their numbers, emails and names, WhatsApp and website chat records and webhook contents older than this are deleted. Totals on the Overview stay.'),
    field('Days to keep conversations', days, 'From 1 to 3650 days (ten years).'),
    h('label', { class: 'checkline' }, forever, 'Keep them until I erase them'),
    error.el, button, saved);
  forever.addEventListener('change', () => (days.disabled = forever.checked));
  /** @type {Promise<Api.GetWorkspaceRetention>} */ (api('GET', '/v1/workspace/retention')).then((r) => {
    forever.checked = r.days === null;
    days.disabled = forever.checked;
    if (r.days !== null) days.value = String(r.days);
  }, (err) => error.show(err));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    saved.textContent = '';
    void busy(button, async () => {
      try {
        /** @type {Api.PutWorkspaceRetention} */
        const answer = await api('PUT', '/v1/workspace/retention', { body: { days: forever.checked ? null : Number(days.value) } });
        saved.textContent = answer.days === null ? 'Saved: conversations are kept until you erase them.' : `Saved: conversations are kept ${answer.days} days.`;
      } catch (err) {
        error.show(err);
      }
    });
  });
  return form;
}

function customerForm() {
  const kind = h('select', {},
    h('option', { value: 'phone' }, 'Phone number'),
    h('option', { value: 'email' }, 'Email'),
    h('option', { value: 'whatsapp_id' }, 'WhatsApp id'));
  const value = h('input', { type: 'text', autocomplete: 'off', required: true, maxlength: 254 });
  const sure = h('input', { type: 'checkbox' });
  const error = errorBox();
  const result = h('div', { role: 'status' });
  const download = h('button', { type: 'button' }, 'Download everything about them');
  const erase = h('button', { type: 'button', class: 'danger' }, 'Erase everything about them');
  const body = () => ({ [kind.value]: value.value.trim() });
  /** @param {Record<string, number>} counts */
  download.addEventListener('click', () => {
    error.clear();
    replace(result);
    void busy(download, async () => {
      try {
        /** @type {Api.PostPrivacyExport} */
        const answer = await api('POST', '/v1/privacy/export', { body: body() });
        const url = URL.createObjectURL(new Blob([JSON.stringify(answer, null, 2)], { type: 'application/json' }));
        replace(result, h('p', {}, `Found ${answer.said}. `, h('a', { href: url, download: 'customer-data.json' }, 'Save the file')));
      } catch (err) {
        error.show(err);
      }
    });
  });
  erase.addEventListener('click', () => {
    error.clear();
    replace(result);
    if (!sure.checked) return error.show('Tick the box first: erasing cannot be undone.');
    void busy(erase, async () => {
      try {
        /** @type {Api.PostPrivacyErase} */
        const answer = await api('POST', '/v1/privacy/erase', { body: body() });
        replace(result, h('p', {}, `Erased ${answer.said}.`));
        sure.checked = false;
      } catch (err) {
        error.show(err);
      }
    });
  });
  return h('form', { 'aria-label': 'A customer’s data', onsubmit: (/** @type {Event} */ e) => e.preventDefault() },
    h('p', { class: 'hint' }, 'When a customer asks what you hold about them, or asks you to delete it: their calls, chats, WhatsApp messages, contact details and what was sent about them.'),
    field('Find them by', kind), field('Their phone number, email or WhatsApp id', value, 'A phone number with its country code, like +31 6 1234 5678.'),
    h('label', { class: 'checkline' }, sure, 'I understand erasing cannot be undone'),
    error.el, h('div', { class: 'row' }, download, erase), result);
}
