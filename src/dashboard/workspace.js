// @ts-check
/**
 * Workspace: its name, its time zone and how long a quiet website chat stays open (owners change these; admins see
 * them), and the signed-in user's own name and email (account.js). What is saved is shown at once, in the header
 * too; a new time zone shows every time in it from then on (time.js).
 */
/** @import * as Api from './api-types' */
import { api, currentSession, saveSession } from './api.js';
import { busy, clearFieldErrors, errorBox, field, h, loading, replace, showFieldErrors } from './dom.js';
import { yourselfSection } from './account.js';
import { browserTimeZone, setTimeZone } from './time.js';

/** @param {HTMLElement} main @param {import('./app.js').ScreenContext} ctx */
export function renderWorkspace(main, ctx) {
  const settings = h('div', {}, loading('Loading the workspace…'));
  replace(main, h('h1', {}, 'Workspace'),
    h('section', { class: 'card', 'aria-labelledby': 'ws' }, h('h2', { id: 'ws' }, 'Your workspace'), settings),
    yourselfSection(ctx.session));
  let stopped = false;
  /** @type {Promise<Api.GetWorkspace>} */ (api('GET', '/v1/workspace')).then(
    (w) => !stopped && replace(settings, workspaceForm(w, ctx.session.role === 'owner' || ctx.session.role === 'manager')),
    (err) => !stopped && replace(settings, h('p', { class: 'error', role: 'alert' }, err.message)),
  );
  return () => {
    stopped = true;
  };
}

/** @param {{ name: string, time_zone: string | null, webchat_idle_minutes: number }} w @param {boolean} owner */
function workspaceForm(w, owner) {
  const name = h('input', { type: 'text', value: w.name, maxlength: 200, autocomplete: 'organization', required: true, disabled: !owner });
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  const guess = browserTimeZone();
  const zone = h('select', { disabled: !owner },
    h('option', { value: '' }, 'Not chosen'),
    [...new Set([...(w.time_zone ? [w.time_zone] : []), ...zones])].map((z) => h('option', { value: z }, z.replaceAll('_', ' '))));
  zone.value = w.time_zone ?? '';
  const idle = h('input', { type: 'number', min: 5, max: 10080, step: 1, value: w.webchat_idle_minutes, inputmode: 'numeric', disabled: !owner });
  const error = errorBox();
  const saved = h('p', { class: 'hint', role: 'status' });
  const button = h('button', { type: 'submit', disabled: !owner }, 'Save workspace');
  const form = h('form', { 'aria-label': 'Workspace settings' },
    owner ? null : h('p', { class: 'notice' }, 'Only an owner of the workspace can change these.'),
    field('Workspace name', name, 'Shown at the top of the dashboard, to everyone in your team.'),
    field('Time zone', zone, w.time_zone ? 'Your shop’s clock: it suggests the country of phone numbers and team hours.' : `Your shop’s clock. Your browser says ${guess}.`),
    field('Minutes before a quiet website chat ends', idle, 'A website chat with no new message for this long is marked ended (kept, not deleted). Default 30.'),
    error.el, button, saved);
  /** @type {Array<[(f: string) => boolean, HTMLInputElement | HTMLSelectElement]>} */
  const controls = [[(f) => f === 'name', name], [(f) => f === 'time_zone', zone], [(f) => f === 'webchat_idle_minutes', idle]];
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    error.clear();
    clearFieldErrors(controls.map(([, c]) => c));
    saved.textContent = '';
    void busy(button, async () => {
      try {
        /** @type {Api.PatchWorkspace} */
        const answer = await api('PATCH', '/v1/workspace', { body: { name: name.value, time_zone: zone.value || null, webchat_idle_minutes: Number(idle.value) } });
        name.value = answer.name;
        zone.value = answer.time_zone ?? '';
        idle.value = String(answer.webchat_idle_minutes);
        const session = currentSession();
        if (session) saveSession({ ...session, workspace: answer.name, timeZone: answer.time_zone ?? null });
        setTimeZone(answer.time_zone);
        const shown = document.querySelector('header .workspace');
        if (shown) shown.textContent = answer.name;
        saved.textContent = `Saved: ${answer.name}.`;
      } catch (err) {
        showFieldErrors(err, controls, error);
      }
    });
  });
  return form;
}
