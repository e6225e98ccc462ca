/**
 * What the runner makes of a benchmark's runs: every metric as the median with the min–max over the runs, its target
 * judged on the median and on each run, and whether the benchmark failed (an `invalid` sentence in any run, or a run
 * that threw or exited non-zero). Pure functions over plain data, so the result files and the doc are built from them
 * alone.
 */
import type { Metric, RunResult, Target } from './benchmark.ts';
import type { MachineInfo } from './report.ts';
import { median } from './stats.ts';

/** The state of the machine around one run: a small machine's other work moves the figures. */
export interface RunConditions {
  /** ISO date when the run started. */
  date: string;
  /** Load average over 1, 5 and 15 minutes when the run started. */
  loadAverageStart: [number, number, number];
  /** The same when it ended. */
  loadAverageEnd: [number, number, number];
  /** Free memory when the run started, GiB. */
  freeMemoryGiB: number;
}

/** What bench/run-one.ts writes for one run. */
export interface RunFile {
  conditions: RunConditions;
  result: RunResult;
}

/** One run as the runner saw it: its file, or how it failed (threw, exited non-zero, wrote nothing). */
export type RunRecord =
  | ({ ok: true } & RunFile)
  | { ok: false; exitCode: number | null; signal: string | null; stderrTail: string; conditions?: RunConditions };

export type Verdict = 'pass' | 'miss' | 'none';

export interface MetricSummary {
  key: string;
  label: string;
  unit: string;
  digits?: number;
  target?: Target;
  /** This metric's value in each run, in run order (null where a run did not report it). */
  values: (number | null)[];
  median: number;
  min: number;
  max: number;
  /** The target judged on the median (for a target naming another metric: against that metric's median). */
  verdict: Verdict;
  /** Runs whose own value met the target (against that run's own value of a named metric). */
  runsMet: number;
  /** Runs that reported this metric. */
  runsCounted: number;
}

export interface BenchmarkSummary {
  /** 'failed' when any run is invalid or did not finish; else 'miss' when a median misses its target; else 'pass'. */
  status: 'pass' | 'miss' | 'failed';
  /** Every `invalid` sentence of every run, with the run's number (1-based). */
  invalid: { run: number; sentence: string }[];
  /** Runs that threw, exited non-zero or wrote no result. */
  failedRuns: { run: number; exitCode: number | null; signal: string | null; stderrTail: string }[];
  metrics: MetricSummary[];
  /** The run whose setup paragraph describes the benchmark (the median run of the first metric with a target). */
  medianRun: number | null;
}

/** What bench/results/<name>.json and bench/results/runs/<folder>/<name>.json hold. */
export interface ResultFile {
  format: 'runs-v1';
  benchmark: string;
  title: string;
  machine: MachineInfo;
  runs: RunRecord[];
  summary: BenchmarkSummary;
}

/** Whether `value` meets `target`; `lookup` gives another metric's value for a target that names one. */
export function meets(value: number, target: Target, lookup: (key: string) => number | undefined): boolean {
  let bound: number;
  if ('metric' in target) {
    const other = lookup(target.metric);
    if (other === undefined || !Number.isFinite(other)) return false;
    bound = other * (target.factor ?? 1);
  } else {
    bound = target.value;
  }
  if (!Number.isFinite(value)) return false;
  switch (target.op) {
    case '<=':
      return value <= bound;
    case '>=':
      return value >= bound;
    case '=':
      return value === bound;
  }
}

export function summarizeRuns(runs: readonly RunRecord[]): BenchmarkSummary {
  const invalid: BenchmarkSummary['invalid'] = [];
  const failedRuns: BenchmarkSummary['failedRuns'] = [];
  runs.forEach((r, i) => {
    if (r.ok) for (const sentence of r.result.invalid) invalid.push({ run: i + 1, sentence });
    else failedRuns.push({ run: i + 1, exitCode: r.exitCode, signal: r.signal, stderrTail: r.stderrTail });
  });

  // Metrics in the order the first run that has them lists them; each keeps its first description.
  const described = new Map<string, Metric>();
  for (const r of runs) if (r.ok) for (const m of r.result.metrics) if (!described.has(m.key)) described.set(m.key, m);
  // A value that is not a finite number (NaN and Infinity become null in JSON) counts as not reported.
  const byRun = runs.map((r) =>
    r.ok ? new Map(r.result.metrics.filter((m) => typeof m.value === 'number' && Number.isFinite(m.value)).map((m) => [m.key, m.value])) : null,
  );
  const medians = new Map<string, number>();
  for (const key of described.keys()) {
    const present = byRun.flatMap((values) => (values?.has(key) ? [values.get(key)!] : []));
    medians.set(key, median(present));
  }

  const metrics: MetricSummary[] = [...described.values()].map((m) => {
    const values = byRun.map((v) => (v?.has(m.key) ? v.get(m.key)! : null));
    const present = values.filter((v): v is number => v !== null);
    const med = medians.get(m.key)!;
    let verdict: Verdict = 'none';
    let runsMet = 0;
    if (m.target) {
      const target = m.target;
      verdict = meets(med, target, (key) => medians.get(key)) ? 'pass' : 'miss';
      runsMet = byRun.filter((v) => v?.has(m.key) && meets(v.get(m.key)!, target, (key) => v.get(key))).length;
    }
    return {
      key: m.key,
      label: m.label,
      unit: m.unit,
      ...(m.digits === undefined ? {} : { digits: m.digits }),
      ...(m.target ? { target: m.target } : {}),
      values,
      median: med,
      min: present.length === 0 ? Number.NaN : Math.min(...present),
      max: present.length === 0 ? Number.NaN : Math.max(...present),
      verdict,
      runsMet,
      runsCounted: present.length,
    };
  });

  const failed = invalid.length > 0 || failedRuns.length > 0 || runs.length === 0;
  const status = failed ? 'failed' : metrics.some((m) => m.verdict === 'miss') ? 'miss' : 'pass';
  return { status, invalid, failedRuns, metrics, medianRun: medianRun(runs, metrics) };
}

/**
 * The run (1-based) whose value of the first metric with a target (else the first metric) is the median, the lower
 * middle one for an even count: its setup paragraph is the one shown.
 */
function medianRun(runs: readonly RunRecord[], metrics: readonly MetricSummary[]): number | null {
  const okRuns = runs.flatMap((r, i) => (r.ok ? [i] : []));
  if (okRuns.length === 0) return null;
  const metric = metrics.find((m) => m.target) ?? metrics[0];
  if (!metric) return okRuns[0]! + 1;
  const ranked = okRuns
    .filter((i) => metric.values[i] !== null)
    .sort((a, b) => metric.values[a]! - metric.values[b]! || a - b);
  if (ranked.length === 0) return okRuns[0]! + 1;
  return ranked[(ranked.length - 1) >> 1]! + 1;
}

/** A metric's value as shown: `digits` decimals (2 for milliseconds, 0 otherwise, unless the metric says). */
export function formatValue(metric: Pick<Metric, 'unit' | 'digits'>, value: number): string {
  if (!Number.isFinite(value)) return '–';
  const digits = metric.digits ?? (metric.unit === 'ms' ? 2 : 0);
  return value.toFixed(digits);
}

/** The measure column: the label with its unit ("overhead p99, ms"). */
export function measureLabel(metric: Pick<Metric, 'label' | 'unit'>): string {
  return metric.unit === '' ? metric.label : `${metric.label}, ${metric.unit}`;
}

/** The target column: "≤ 25", "≥ 0.85 × plain throughput, req/s". */
export function formatTarget(metric: MetricSummary, metrics: readonly MetricSummary[]): string {
  const target = metric.target;
  if (!target) return '';
  const op = target.op === '<=' ? '≤' : target.op === '>=' ? '≥' : '=';
  if ('metric' in target) {
    const other = metrics.find((m) => m.key === target.metric);
    const factor = target.factor === undefined || target.factor === 1 ? '' : `${target.factor} × `;
    return `${op} ${factor}${other ? other.label : target.metric}`;
  }
  // The bound as written (≤ 25, not ≤ 25.00), in the metric's decimals at most.
  return `${op} ${Number.isFinite(target.value) ? String(Number(formatValue(metric, target.value))) : '–'}`;
}

/** The result column: "pass (3/3)", "MISS (1/3)", or empty without a target. */
export function formatVerdict(metric: MetricSummary): string {
  if (metric.verdict === 'none') return '';
  return `${metric.verdict === 'pass' ? 'pass' : 'MISS'} (${metric.runsMet}/${metric.runsCounted})`;
}

/** "10.00–30.00"; "-0.33 to 5.25" when a bound is negative (a dash beside a minus sign misreads). */
function formatRange(m: MetricSummary): string {
  const [min, max] = [formatValue(m, m.min), formatValue(m, m.max)];
  return m.min < 0 || m.max < 0 ? `${min} to ${max}` : `${min}–${max}`;
}

/** The rows of the table `measure | median | min–max | target | result`. */
export function summaryRows(summary: BenchmarkSummary): string[][] {
  return summary.metrics.map((m) => [
    measureLabel(m),
    formatValue(m, m.median),
    m.runsCounted > 1 ? formatRange(m) : '',
    formatTarget(m, summary.metrics),
    formatVerdict(m),
  ]);
}

export const summaryHeader = ['measure', 'median', 'min–max', 'target', 'result'] as const;

/** "1.20 / 0.95 / 0.80" */
export function formatLoad(load: readonly number[]): string {
  return load.map((v) => v.toFixed(2)).join(' / ');
}
