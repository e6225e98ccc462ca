/**
 * The guard against the next regression (docs/performance.md, "Against a ref"): one benchmark run on two trees, this
 * one and a git ref's, alternately in the same window (this machine's absolute figures drift by whole factors between
 * hours; two trees measured minutes apart compare, a record from another day does not). The comparison is the ratio
 * of the medians, this tree's over the ref's, with the spread of the ratios of runs made side by side.
 *
 * Guarded figures are the ones where lower is better and a regression hurts callers: every p99 and every CPU cost per
 * unit of work. One of them more than GUARD_WORSE_RATIO times the ref's fails the comparison.
 */
import { markdownTable, textTable } from './benchmark.ts';
import type { MachineInfo } from './report.ts';
import { formatLoad, formatValue, summarizeRuns, type RunRecord } from './summary.ts';

/** 15% worse than the ref fails the guard. */
export const GUARD_WORSE_RATIO = 1.15;

/** A p99, or CPU per unit of work (per turn, per delivery, per request, per event). */
export function isGuarded(key: string): boolean {
  return /(^|_)p99(_|$)/.test(key) || /cpu_(us_)?per_/.test(key);
}

export interface AgainstRow {
  key: string;
  label: string;
  unit: string;
  digits?: number;
  ref: number;
  head: number;
  /** head / ref of the medians; null when the ref's median is 0. */
  ratio: number | null;
  /** The smallest and largest head / ref of runs made side by side (run i of each tree). */
  spread: [number, number] | null;
  guarded: boolean;
  /** Guarded and more than GUARD_WORSE_RATIO times the ref's. */
  worse: boolean;
}

export interface AgainstFile {
  format: 'against-v1';
  benchmark: string;
  title: string;
  /** The ref as given, the commit it named, and this tree's commit (with `+changes` when the work tree differs). */
  ref: { name: string; commit: string };
  head: { commit: string };
  machine: MachineInfo;
  /** Runs in the order they ran: which tree, and what came of it. */
  runs: { tree: 'head' | 'ref'; record: RunRecord }[];
  rows: AgainstRow[];
  /** 'failed' when a run of either tree is invalid or did not finish; else 'worse' or 'ok'. */
  status: 'ok' | 'worse' | 'failed';
}

/** Alternates the trees so neither always runs first: head, ref; ref, head; head, ref … */
export function runOrder(runs: number): ('head' | 'ref')[] {
  const order: ('head' | 'ref')[] = [];
  for (let i = 0; i < runs; i++) order.push(...(i % 2 === 0 ? (['head', 'ref'] as const) : (['ref', 'head'] as const)));
  return order;
}

export function compareRuns(head: readonly RunRecord[], ref: readonly RunRecord[]): { rows: AgainstRow[]; failed: boolean } {
  const h = summarizeRuns(head);
  const r = summarizeRuns(ref);
  const failed = h.status === 'failed' || r.status === 'failed';
  const rows: AgainstRow[] = [];
  for (const hm of h.metrics) {
    const rm = r.metrics.find((m) => m.key === hm.key);
    if (!rm) continue;
    const ratio = rm.median === 0 ? null : hm.median / rm.median;
    const pairs: number[] = [];
    for (let i = 0; i < Math.min(hm.values.length, rm.values.length); i++) {
      const a = hm.values[i];
      const b = rm.values[i];
      if (a != null && b != null && b !== 0) pairs.push(a / b);
    }
    const guarded = isGuarded(hm.key);
    rows.push({
      key: hm.key,
      label: hm.label,
      unit: hm.unit,
      ...(hm.digits === undefined ? {} : { digits: hm.digits }),
      ref: rm.median,
      head: hm.median,
      ratio,
      spread: pairs.length > 0 ? [Math.min(...pairs), Math.max(...pairs)] : null,
      guarded,
      worse: guarded && ratio !== null && ratio > GUARD_WORSE_RATIO,
    });
  }
  return { rows, failed };
}

const ratioText = (n: number) => `${n.toFixed(2)}×`;
const eachTree = (file: AgainstFile) => `${file.runs.length / 2} run${file.runs.length === 2 ? '' : 's'} each`;

function cells(row: AgainstRow): string[] {
  return [
    `${row.label}${row.unit ? `, ${row.unit}` : ''}`,
    formatValue(row, row.ref),
    formatValue(row, row.head),
    row.ratio === null ? '–' : ratioText(row.ratio),
    row.spread === null ? '–' : `${ratioText(row.spread[0])}–${ratioText(row.spread[1])}`,
    row.worse ? `WORSE (> ${ratioText(GUARD_WORSE_RATIO)})` : row.guarded ? 'guarded, ok' : '',
  ];
}

const HEADER = ['measure', 'ref (median)', 'this tree (median)', 'ratio', 'side by side', 'guard'];

function verdict(file: AgainstFile): string {
  if (file.status === 'failed') return 'FAILED: a run of either tree was invalid or did not finish; no comparison.';
  const worse = file.rows.filter((r) => r.worse);
  if (worse.length > 0) return `WORSE than ${file.ref.name}: ${worse.map((r) => r.label).join('; ')}.`;
  return `No guarded figure more than ${Math.round((GUARD_WORSE_RATIO - 1) * 100)}% worse than ${file.ref.name}.`;
}

function runsSentence(file: AgainstFile): string {
  return file.runs
    .map(({ tree, record }, i) => {
      const c = record.conditions;
      const what = tree === 'head' ? 'this tree' : file.ref.name;
      return c ? `${i + 1}. ${what}, load ${formatLoad(c.loadAverageStart)}` : `${i + 1}. ${what}, did not finish`;
    })
    .join('; ');
}

export function againstText(file: AgainstFile): string {
  return [
    `${file.benchmark}: this tree (${file.head.commit}) against ${file.ref.name} (${file.ref.commit}), ${eachTree(file)}, alternating`,
    textTable(HEADER, file.rows.map(cells)),
    verdict(file),
  ].join('\n');
}

export function againstMarkdown(file: AgainstFile, date: string): string {
  return [
    `**${file.benchmark}**: this tree (\`${file.head.commit}\`) against \`${file.ref.name}\` (\`${file.ref.commit}\`), ${eachTree(file)}, alternating, ${date.slice(0, 16).replace('T', ' ')} UTC.`,
    markdownTable(HEADER, file.rows.map(cells)),
    `**${verdict(file)}** Runs in order: ${runsSentence(file)}.`,
  ].join('\n\n');
}


/** What bench/results/against.json holds: the last recorded `--against` comparison, every benchmark of it. */
export interface AgainstRecord {
  format: 'against-list-v1';
  date: string;
  files: AgainstFile[];
}

export function isAgainstRecord(file: unknown): file is AgainstRecord {
  return (file as { format?: unknown } | null)?.format === 'against-list-v1';
}

export function renderAgainstRecord(record: AgainstRecord): string {
  return record.files.map((f) => againstMarkdown(f, record.date)).join('\n\n');
}
