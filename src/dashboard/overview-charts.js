// @ts-check
/**
 * The Overview's charts, drawn with uPlot (served by Botlink itself under /dashboard/assets/, loaded only when the
 * Overview opens). Each chart is a figure with a caption, a one-sentence summary for screen readers, and the same
 * numbers as a table under "Show as a table": the text alternative, and what a phone reader may prefer.
 */
import { h } from './dom.js';
import { formatTime } from './time.js';

/** Where uPlot's module is; a string variable, so the type checker does not look for it beside this file. */
/** @type {string} */
const UPLOT_MODULE = '/dashboard/assets/uplot.esm.js';
const UPLOT_STYLES = '/dashboard/assets/uplot.min.css';

/** @typedef {import('uplot')} Plot a chart, as the dependency's own types say (uplot's dist/uPlot.d.ts) */
/** @typedef {typeof import('uplot')} UPlot */

/** @type {Promise<UPlot> | undefined} */
let loaded;
/** uPlot's constructor, its stylesheet added once. @returns {Promise<UPlot>} */
function loadUplot() {
  if (!document.querySelector(`link[href="${UPLOT_STYLES}"]`)) document.head.append(h('link', { rel: 'stylesheet', href: UPLOT_STYLES }));
  loaded ??= import(UPLOT_MODULE).then((/** @type {{ default: UPlot }} */ m) => m.default);
  return loaded;
}

/** Colours with at least 3:1 contrast on white, told apart by the legend's words and the table too. */
const COLOURS = ['#0b57d0', '#b3261e', '#0d7a3a', '#8a4b00', '#6a3fb5'];

/**
 * @typedef {object} Series
 * @property {string} label
 * @property {(number | null)[]} values
 */

/**
 * @typedef {object} ChartSpec
 * @property {string} id
 * @property {string} title
 * @property {string} summary one sentence saying what the chart shows
 * @property {number[]} starts bucket starts, ms since the epoch
 * @property {'hour' | 'day'} bucket
 * @property {string} timeZone
 * @property {Series[]} series
 * @property {boolean} [stacked] draw the series on top of each other (areas)
 * @property {string} unit shown in the table's header, e.g. 'conversations'
 */

/** A bucket's start as people read it, in the workspace's time zone. @param {number} ms @param {'hour' | 'day'} bucket @param {string} timeZone */
export function bucketLabel(ms, bucket, timeZone) {
  const options = bucket === 'hour'
    ? /** @type {Intl.DateTimeFormatOptions} */ ({ day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZone })
    : /** @type {Intl.DateTimeFormatOptions} */ ({ weekday: 'short', day: 'numeric', month: 'short', timeZone });
  return formatTime(ms, options);
}

/** The numbers of a chart as a table. @param {ChartSpec} spec */
function table(spec) {
  // Focusable: a table wider than a phone scrolls sideways, also from the keyboard.
  return h('div', { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': `${spec.title}, as a table` }, h('table', {},
    h('caption', { class: 'sr-only' }, `${spec.title}, as a table`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, spec.bucket === 'hour' ? 'Hour' : 'Day'), spec.series.map((s) => h('th', { scope: 'col' }, s.label)))),
    h('tbody', {}, spec.starts.map((start, i) => h('tr', {},
      h('th', { scope: 'row' }, bucketLabel(start, spec.bucket, spec.timeZone)),
      spec.series.map((s) => h('td', {}, s.values[i] == null ? '—' : String(s.values[i]))))))));
}

/** Stacked values: each series carries the ones before it, so areas sit on top of each other. @param {Series[]} series */
function stack(series) {
  /** @type {number[]} */
  let below = [];
  return series.map((s) => {
    const values = s.values.map((v, i) => (v ?? 0) + (below[i] ?? 0));
    below = values;
    return values;
  });
}

/**
 * A chart figure: uPlot draws into it once loaded; the table is there at once (and stays if the chart cannot load).
 * Returns the figure and what stops it following the window's width.
 * @param {ChartSpec} spec
 * @returns {{ el: HTMLElement, stop: () => void }}
 */
export function chart(spec) {
  const canvas = h('div', { class: 'chart', role: 'img', 'aria-label': `${spec.title}. ${spec.summary} The numbers are in the table below.` });
  const el = h('figure', { class: 'card chart-card', 'data-chart': spec.id },
    h('figcaption', {}, h('h3', {}, spec.title), h('p', { class: 'hint' }, spec.summary)),
    canvas,
    h('details', {}, h('summary', {}, 'Show as a table'), table(spec)));
  /** @type {Plot | undefined} */
  let plot;
  let stopped = false;
  const width = () => Math.max(260, canvas.clientWidth || el.clientWidth - 32);
  const onResize = () => plot?.setSize({ width: width(), height: height() });
  const height = () => (window.innerWidth < 600 ? 200 : 260);
  loadUplot().then((uPlot) => {
    if (stopped) return;
    const x = spec.starts.map((ms) => ms / 1000);
    const ys = spec.stacked ? stack(spec.series) : spec.series.map((s) => s.values);
    /** @type {import('uplot').Options} */
    const opts = {
      width: width(),
      height: height(),
      tzDate: (/** @type {number} */ ts) => uPlot.tzDate(new Date(ts * 1000), spec.timeZone),
      scales: { x: { time: true } },
      axes: [{ stroke: '#4f545c', grid: { stroke: '#e3e6ea' } }, { stroke: '#4f545c', grid: { stroke: '#e3e6ea' }, size: 50 }],
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      series: [
        {},
        ...spec.series.map((s, i) => ({
          label: s.label,
          stroke: COLOURS[i % COLOURS.length],
          width: 2,
          ...(spec.stacked ? { fill: `${COLOURS[i % COLOURS.length]}33` } : {}),
          // The table shows the real numbers; a stacked line's own value is its share, not the running total.
          value: (/** @type {Plot} */ _u, /** @type {number | null} */ v) => (v == null ? '—' : String(v)),
        })),
      ],
    };
    plot = new uPlot(opts, [x, ...ys], canvas);
    el.setAttribute('data-drawn', 'true');
    window.addEventListener('resize', onResize);
  }, () => {
    canvas.replaceChildren(h('p', { class: 'hint' }, 'The chart could not be drawn; the numbers are in the table below.'));
  });
  return {
    el,
    stop: () => {
      stopped = true;
      window.removeEventListener('resize', onResize);
      plot?.destroy();
    },
  };
}
