/**
 * What a benchmark module in bench/ is: a file named `*.bench.ts` that exports `name`, `title` and `run()`. The
 * runner (bench/run.ts) starts each run of each benchmark in a process of its own (bench/run-one.ts), three runs by
 * default, and reports every metric as the median with the min–max over the runs. A benchmark only measures: it
 * returns its metrics and whatever made the run invalid; it never prints a verdict or writes a file itself.
 */

/** A target for one metric: a fixed bound, or another metric of the same run (`metric`, times `factor`, default 1). */
export type Target =
  | { op: '<=' | '>=' | '='; value: number }
  | { op: '<=' | '>='; metric: string; factor?: number };

export interface Metric {
  /** Stable id, snake_case (`overhead_p99_ms`); the same in every run, so runs can be compared. */
  key: string;
  /** The row's words in the table ("overhead beyond the integrator, p99"). */
  label: string;
  /** Unit shown after the label: 'ms', 'µs', '/s', 'MiB', '%', '' for a count. */
  unit: string;
  value: number;
  /** Decimals shown (default 2 when the unit is 'ms', else 0). */
  digits?: number;
  target?: Target;
}

export interface RunResult {
  metrics: Metric[];
  /**
   * Everything that makes this run's measurement invalid, one sentence each: an unanswered prompt, a lost or
   * duplicated event, a failed request, a call that could not connect. Any entry fails the whole benchmark (exit 1),
   * printed before its figures.
   */
  invalid: string[];
  /** One paragraph for docs/performance.md: what ran against what, with which parameters. */
  setup: string;
  /** The parameters, as they went into the run (written to the result file). */
  parameters: Record<string, unknown>;
  /** Anything else worth keeping (per-round figures, RSS over time, profiles' top items). */
  details?: Record<string, unknown>;
}

export interface Benchmark {
  /** kebab-case; names the result file and the placeholder `<!-- bench:<name> -->` in bench/performance.template.md. */
  name: string;
  /** Heading in docs/performance.md. */
  title: string;
  run(): Promise<RunResult>;
}

/** A whole number from the environment, or the default; anything else stops the run with a sentence naming it. */
export function envNumber(name: string, fallback: number, { min = 0 }: { min?: number } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new RangeError(`${name} must be a number >= ${min}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** Fixed-width text table: the first column left-aligned, the others right-aligned. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** GitHub-flavoured Markdown table, numbers right-aligned. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const align = header.map((_h, i) => (i === 0 ? ':--' : '--:'));
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align), ...rows.map(line)].join('\n');
}

/** Progress for the terminal (stderr), prefixed with the benchmark's name. */
export function progress(name: string, line: string): void {
  process.stderr.write(`  [${name}] ${line}\n`);
}

