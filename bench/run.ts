/**
 * `npm run bench [-- names…] [--runs N] [--record] [--label text]`: runs each benchmark named (all of them without
 * names) N times (--runs, else BENCH_RUNS, else 3), every run in a fresh process (bench/run-one.ts), one after the
 * other, and reports every metric as the median with the min–max over the runs.
 *
 * Each benchmark's runs and summary go to bench/results/runs/<UTC time>[-label]/<name>.json (untracked). With
 * --record the summary file is also copied to bench/results/<name>.json (tracked) and docs/performance.md is
 * regenerated from bench/performance.template.md and those files (`npm run bench:doc` does only the latter).
 * Without --record no tracked file changes.
 *
 * Exit code 1 when any run of any benchmark was invalid (an unanswered prompt, a lost or duplicated event, a failed
 * request: printed first, in capitals), threw or exited non-zero; a missed target alone exits 0 (a benchmark is a
 * measurement, not a test).
 *
 * BENCH_DIR, BENCH_RESULTS_DIR, BENCH_TEMPLATE and BENCH_DOC point the runner at other files and folders (the runner's
 * own tests use them).
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { textTable } from './lib/benchmark.ts';
import { discoverBenchmarks, type FoundBenchmark } from './lib/discover.ts';
import { defaultPaths, writePerformanceDoc } from './lib/performance-doc.ts';
import { machineInfo, type MachineInfo } from './lib/report.ts';
import {
  formatLoad,
  summarizeRuns,
  summaryHeader,
  summaryRows,
  type ResultFile,
  type RunFile,
  type RunRecord,
} from './lib/summary.ts';

const runOne = fileURLToPath(new URL('./run-one.ts', import.meta.url));
/** Lines of a failed run's stderr shown in the terminal and kept in the result file. */
const STDERR_TAIL_LINES = 30;

interface Options {
  names: string[];
  runs: number;
  record: boolean;
  label: string | undefined;
}

function parseOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { runs: { type: 'string' }, record: { type: 'boolean', default: false }, label: { type: 'string' } },
  });
  const rawRuns = values.runs ?? process.env.BENCH_RUNS ?? '3';
  const runs = Number(rawRuns);
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`--runs (or BENCH_RUNS) must be a whole number >= 1, got ${JSON.stringify(rawRuns)}`);
  return { names: positionals, runs, record: values.record, label: values.label };
}

/** `2026-11-25T13-40-12Z` plus `-label`, safe as a folder name everywhere. */
function folderName(date: Date, label: string | undefined): string {
  const stamp = `${date.toISOString().slice(0, 19).replaceAll(':', '-')}Z`;
  const suffix = label ? `-${label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '')}` : '';
  return `${stamp}${suffix}`;
}

/** One run in a fresh process; its stderr (progress lines) goes through to ours, and its tail is kept. */
async function runOnce(benchmark: FoundBenchmark, out: string): Promise<RunRecord> {
  const child = spawn(process.execPath, [runOne, benchmark.name, out], { stdio: ['ignore', 'inherit', 'pipe'], env: process.env });
  let tail = '';
  child.stderr.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk);
    tail = (tail + chunk.toString('utf8')).slice(-16_384);
  });
  const [exitCode, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, sig) => resolve([code, sig]));
  });
  const stderrTail = tail.trimEnd().split('\n').slice(-STDERR_TAIL_LINES).join('\n');
  if (exitCode !== 0) return { ok: false, exitCode, signal, stderrTail };
  try {
    const file = JSON.parse(await readFile(out, 'utf8')) as RunFile;
    return { ok: true, ...file };
  } catch (err) {
    return { ok: false, exitCode, signal, stderrTail: `${stderrTail}\nno readable result file: ${String(err)}`.trim() };
  }
}

function report(file: ResultFile): string {
  const { summary } = file;
  const lines: string[] = [];
  for (const { run, sentence } of summary.invalid) lines.push(`INVALID (run ${run}): ${sentence.toUpperCase()}`);
  for (const f of summary.failedRuns) {
    const how = f.signal ? `was killed by ${f.signal}` : `exited with code ${f.exitCode}`;
    lines.push(`RUN ${f.run} FAILED: it ${how}. Its stderr ended with:`, ...f.stderrTail.split('\n').map((l) => `    ${l}`));
  }
  if (summary.status === 'failed') lines.push(`${file.benchmark} FAILED: these figures are not a valid measurement.`, '');
  if (summary.metrics.length > 0) lines.push(textTable(summaryHeader, summaryRows(summary)), '');
  file.runs.forEach((r, i) => {
    if (!r.conditions) return;
    const c = r.conditions;
    lines.push(`run ${i + 1}: ${c.date}, load average (1/5/15 min) ${formatLoad(c.loadAverageStart)} at the start, ${formatLoad(c.loadAverageEnd)} at the end`);
  });
  if (summary.status !== 'failed') lines.push(summary.status === 'pass' ? 'Every target met (on the median).' : 'TARGET MISSED (on the median).');
  return lines.join('\n');
}

async function runBenchmark(benchmark: FoundBenchmark & { title: string }, runs: number, machine: MachineInfo): Promise<ResultFile> {
  const records: RunRecord[] = [];
  // Each run writes its own file; the benchmark's result file in `folder` then holds them all.
  const scratch = await mkdtemp(join(tmpdir(), `bench-${benchmark.name}-`));
  try {
    for (let i = 1; i <= runs; i++) {
      console.log(`-- ${benchmark.name}: run ${i} of ${runs}`);
      records.push(await runOnce(benchmark, join(scratch, `run-${i}.json`)));
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return { format: 'runs-v1', benchmark: benchmark.name, title: benchmark.title, machine, runs: records, summary: summarizeRuns(records) };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const paths = defaultPaths();
  const all = await discoverBenchmarks();
  const unknown = options.names.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length > 0) {
    console.error(`Unknown benchmark ${unknown.join(', ')}; there are: ${all.map((b) => b.name).join(', ')}.`);
    return 1;
  }
  const selected = options.names.length === 0 ? all : all.filter((b) => options.names.includes(b.name));
  const legacy = selected.filter((b) => b.title === null);
  const runnable = selected.filter((b): b is FoundBenchmark & { title: string } => b.title !== null);

  const machine = await machineInfo();
  const folder = join(paths.resultsDir, 'runs', folderName(new Date(), options.label));
  await mkdir(folder, { recursive: true });
  console.log(`Benchmarks on ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}; ${options.runs} runs each, every run in its own process.`);
  console.log(`Results: ${folder}\n`);
  for (const b of legacy) console.log(`${b.name}: not converted yet to the run-result interface; skipped.`);

  const outcomes: { name: string; status: ResultFile['summary']['status'] }[] = [];
  for (const benchmark of runnable) {
    console.log(`== ${benchmark.name}: ${benchmark.title}`);
    const file = await runBenchmark(benchmark, options.runs, machine);
    const out = join(folder, `${benchmark.name}.json`);
    await writeFile(out, `${JSON.stringify(file, null, 2)}\n`);
    console.log(`\n${report(file)}\nWrote ${out}\n`);
    outcomes.push({ name: benchmark.name, status: file.summary.status });
    if (options.record) await copyFile(out, join(paths.resultsDir, `${benchmark.name}.json`));
  }
  if (options.record && runnable.length > 0) {
    await writePerformanceDoc(paths);
    console.log(`Recorded: ${join(paths.resultsDir, '<name>.json')} copied, ${paths.doc} regenerated.\n`);
  }

  console.log('Summary:');
  const words = { pass: 'targets met', miss: 'TARGET MISSED', failed: 'FAILED (invalid or did not run)' };
  for (const { name, status } of outcomes) console.log(`  ${name}: ${words[status]}`);
  for (const b of legacy) console.log(`  ${b.name}: not converted yet, skipped`);
  return outcomes.some((o) => o.status === 'failed') ? 1 : 0;
}

try {
  process.exitCode = await main();
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
}
