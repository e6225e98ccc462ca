// @ts-check
/**
 * The first-day list at the top of the Overview (owners and admins) until every step is done (docs/analytics.md,
 * "The first day"). Each step links to the screen that does it and is ticked from the workspace's real state
 * (GET /v1/workspace/first-day), read again whenever the Overview is opened.
 */
/** @import * as Api from './api-types' */
import { api } from './api.js';
import { h, replace } from './dom.js';

const BASE = '/dashboard';

/** What each step asks, and where it is done. */
const STEPS = /** @type {Record<string, { title: string, how: string, path: string, link: string }>} */ ({
  name_workspace: { title: 'Name your workspace', how: 'Customers and colleagues see this name.', path: 'workspace', link: 'Open Workspace' },
  add_knowledge: { title: 'Add what the bot should know', how: 'Your website, a file (PDF, Word) or a page written here: the bot knows nothing about your shop yet.', path: 'knowledge', link: 'Open Knowledge' },
  try_question: { title: 'Try a question', how: 'Ask as a customer would, under “Try a question” on Knowledge, and see what the bot answers.', path: 'knowledge', link: 'Try a question' },
  put_chat_on_site: { title: 'Put the chat on your website', how: 'Switch it on for your site and paste one line into your pages (help for Shopify, WordPress and Wix is there).', path: 'channels', link: 'Open Channels' },
  invite_colleague: { title: 'Invite a colleague', how: 'They get a link to choose a password.', path: 'users', link: 'Open Users' },
  set_availability: { title: 'Say who is available', how: 'Set yourself to Available at the top of the page when you can answer customers; the chat tells them a colleague will reply.', path: 'inbox', link: 'Open Inbox' },
});

/** The list, filled in when the state arrives; nothing at all once every step is done or when it cannot be read. */
export function firstDayList() {
  const el = h('section', { class: 'card first-day', 'aria-labelledby': 'first-day', hidden: true });
  /** @type {Promise<Api.GetWorkspaceFirstDay>} */ (api('GET', '/v1/workspace/first-day')).then((answer) => {
    if (answer.done) return;
    /** @type {{ id: string, done: boolean }[]} */
    const steps = answer.steps;
    const left = steps.filter((s) => !s.done).length;
    replace(el,
      h('h2', { id: 'first-day' }, 'Your first day'),
      h('p', {}, `${steps.length - left} of ${steps.length} done. This list goes away when all are.`),
      h('ol', { class: 'steps' }, ...steps.map((step) => {
        const words = STEPS[step.id];
        if (!words) return null;
        // A data-link: the dashboard's router opens the screen without a page load (app.js).
        const link = h('a', { href: `${BASE}/${words.path}`, 'data-link': true }, words.link);
        return h('li', { class: step.done ? 'done' : 'todo', 'data-step': step.id },
          h('span', { class: 'tick', 'aria-hidden': 'true' }, step.done ? '✓' : ''),
          h('div', {},
            h('strong', {}, words.title), h('span', { class: 'sr-only' }, step.done ? ' (done)' : ' (to do)'),
            h('p', { class: 'hint' }, words.how),
            step.done ? null : link));
      })));
    el.hidden = false;
  }, () => undefined);
  return el;
}
