/**
 * What a benchmark module in bench/ is: a file named `*.bench.ts` that exports `name` and `run()`. The runner
 * (bench/run.ts) finds them, runs them one after the other and writes what they return; a benchmark itself only
 * measures.
 */

/** How a run compares with its targets: 'failed' means the measurement itself is not valid (requests failed). */
export type BenchmarkStatus = 'pass' | 'miss' | 'failed';

export interface BenchmarkResult {
  status: BenchmarkStatus;
  /** Plain-text table for the terminal. */
  table: string;
  /** Markdown for this benchmark's section of docs/performance.md (the runner adds the machine and the date). */
  markdown: string;
  /** Parameters and results, written to bench/results/<name>.json with the machine info. */
  data: { parameters: Record<string, unknown>; results: Record<string, unknown> };
}

export interface Benchmark {
  /** kebab-case; names the JSON file and the doc markers `<!-- bench:<name>:start -->`. */
  name: string;
  run(): Promise<BenchmarkResult>;
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
