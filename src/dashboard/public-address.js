// @ts-check
/**
 * Links and lines people take elsewhere (the chat's line for a website, invite links, the addresses for Twilio and
 * Meta): one way to show them, and a plain warning when the service's address is this computer's own
 * (README, "Put it online"): such a link works on this computer only.
 */
import { copyable, h } from './dom.js';

/** @param {string} url */
export function isLocalAddress(url) {
  let host;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || host === '0.0.0.0' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The warning under a link that starts with a loopback address; null when the address is a public one.
 * @param {string} url @param {string} what what the link is for, as "the line on your website"
 */
export function localAddressNote(url, what) {
  if (!isLocalAddress(url)) return null;
  const origin = new URL(url).origin;
  return h('p', { class: 'notice', 'data-testid': 'local-address' },
    h('strong', {}, 'Works on this computer only. '),
    `${what[0]?.toUpperCase() ?? ''}${what.slice(1)} starts with ${origin}, which only this computer can open. `,
    'Put Botlink online first (the README\'s "Put it online": a domain name and one command), or ask whoever runs it to; ',
    'this screen then shows the public https address by itself.');
}

/** Where each shop platform wants the line: a few steps each, in the words of its own admin screens. */
const PLATFORMS = /** @type {const} */ ([
  ['Shopify', 'Online Store → Themes → ⋯ → Edit code → layout/theme.liquid: paste the line just above </body>, then Save.'],
  ['WordPress', 'Appearance → Theme File Editor → footer.php: paste the line just before </body>, then Update File.'],
  ['Wix', 'Settings → Custom code → + Add custom code: paste the line, choose "All pages" and "Body – end", then Apply.'],
  ['Plain HTML', 'Open every page that should show the chat and paste the line just before </body>.'],
]);

/**
 * The line to paste on a website, with where to paste it on common shop platforms and the local-address warning.
 * @param {string} scriptUrl the widget's script address (GET /v1/channels/setup) @param {string} key the widget key
 */
export function widgetSnippet(scriptUrl, key) {
  const snippet = `<script src="${scriptUrl}" data-key="${key}" async></script>`;
  return h('div', { class: 'snippet' },
    h('p', {}, 'Paste this line just before </body> on every page that should show the chat. The key in it can only start chats, so anyone may see it.'),
    copyable('Line for your website', snippet, undefined, 'snippet'),
    localAddressNote(scriptUrl, 'the line for your website'),
    h('details', {},
      h('summary', {}, 'Where to paste it on Shopify, WordPress, Wix or plain HTML'),
      h('dl', {}, ...PLATFORMS.flatMap(([name, how]) => [h('dt', {}, name), h('dd', {}, how)]))));
}
