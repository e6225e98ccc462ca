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
 * `--against <git ref>`: the guard against a regression (bench/lib/against.ts). The ref is checked out in a worktree of
 * its own (reused while the ref names the same commit; its dependencies installed when its package-lock.json differs
 * from this tree's), and every benchmark named runs on both trees alternately, N times each; the answer is the ratio of
 * every figure with its spread. Exit code 1 when a p99 or a CPU cost is more than 15% worse than the ref's, or a run of
 * either tree was invalid. With --record the comparison goes to bench/results/against.json and docs/performance.md.
 *
 * BENCH_DIR, BENCH_RESULTS_DIR, BENCH_TEMPLATE and BENCH_DOC point the runner at other files and folders (the runner's
 * own tests use them).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { againstText, compareRuns, runOrder, type AgainstFile, type AgainstRecord } from './lib/against.ts';
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
  against: string | undefined;
}

function parseOptions(argv: string[]): Options {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { runs: { type: 'string' }, record: { type: 'boolean', default: false }, label: { type: 'string' }, against: { type: 'string' } },
  });
  const rawRuns = values.runs ?? process.env.BENCH_RUNS ?? '3';
  const runs = Number(rawRuns);
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`--runs (or BENCH_RUNS) must be a whole number >= 1, got ${JSON.stringify(rawRuns)}`);
  return { names: positionals, runs, record: values.record, label: values.label, against: values.against };
}

/** `2026-11-25T13-40-12Z` plus `-label`, safe as a folder name everywhere. */
function folderName(date: Date, label: string | undefined): string {
  const stamp = `${date.toISOString().slice(0, 19).replaceAll(':', '-')}Z`;
  const suffix = label ? `-${label.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '')}` : '';
  return `${stamp}${suffix}`;
}

/**
 * One run in a fresh process; its stderr (progress lines) goes through to ours, and its tail is kept. `tree`: the root
 * of another checkout whose bench/run-one.ts runs it (`--against`); this one's by default.
 */
async function runOnce(benchmark: Pick<FoundBenchmark, 'name'>, out: string, tree?: string): Promise<RunRecord> {
  const script = tree ? join(tree, 'bench', 'run-one.ts') : runOne;
  const child = spawn(process.execPath, [script, benchmark.name, out], { stdio: ['ignore', 'inherit', 'pipe'], env: process.env, ...(tree ? { cwd: tree } : {}) });
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

const git = promisify(execFile);
const thisTree = dirname(dirname(runOne));

/** This tree's commit, with `+changes` when its work tree differs from it. */
async function headCommit(): Promise<string> {
  const { stdout: commit } = await git('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: thisTree });
  const { stdout: status } = await git('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: thisTree });
  return `${commit.trim()}${status.trim() ? '+changes' : ''}`;
}

/** A worktree of `ref` (reused when it exists), with its dependencies: ours when the lock files match, else `npm ci`. */
async function refTree(ref: string): Promise<{ root: string; commit: string }> {
  const { stdout } = await git('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: thisTree }).catch(() => {
    throw new Error(`--against ${ref}: not a commit of this repository`);
  });
  const commit = stdout.trim();
  const root = join(tmpdir(), `botlink-against-${commit.slice(0, 12)}`);
  if (!existsSync(join(root, 'package.json'))) {
    console.log(`Checking out ${ref} (${commit.slice(0, 12)}) in ${root}`);
    await git('git', ['worktree', 'add', '--detach', '--force', root, commit], { cwd: thisTree });
  }
  if (!existsSync(join(root, 'node_modules'))) {
    const [ours, theirs] = await Promise.all([readFile(join(thisTree, 'package-lock.json'), 'utf8'), readFile(join(root, 'package-lock.json'), 'utf8')]);
    if (ours === theirs) {
      const { symlink } = await import('node:fs/promises');
      await symlink(join(thisTree, 'node_modules'), join(root, 'node_modules'), 'dir');
    } else {
      console.log(`${ref}'s package-lock.json differs from this tree's: npm ci in ${root}`);
      await git('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    }
  }
  return { root, commit: commit.slice(0, 12) };
}

/** `--against`: each benchmark on both trees, alternating; the ratios; exit code 1 when a guarded figure is worse. */
async function against(
  options: Options,
  runnable: (FoundBenchmark & { title: string })[],
  machine: MachineInfo,
  folder: string,
  paths: ReturnType<typeof defaultPaths>,
): Promise<number> {
  const ref = await refTree(options.against!);
  const head = await headCommit();
  const files: AgainstFile[] = [];
  for (const benchmark of runnable) {
    // The ref's runner finds benchmarks as ours does: in BENCH_DIR when it is set, else in its own bench/.
    const refBenchmarks = await discoverBenchmarks(process.env.BENCH_DIR ?? join(ref.root, 'bench'));
    if (!refBenchmarks.some((b) => b.name === benchmark.name)) {
      console.log(`${benchmark.name}: ${options.against} has no such benchmark; skipped.\n`);
      continue;
    }
    console.log(`== ${benchmark.name}: this tree against ${options.against}, ${options.runs} runs each, alternating`);
    const scratch = await mkdtemp(join(tmpdir(), `bench-${benchmark.name}-against-`));
    const runs: AgainstFile['runs'] = [];
    try {
      let i = 0;
      for (const tree of runOrder(options.runs)) {
        i += 1;
        console.log(`-- ${benchmark.name}: run ${i} of ${options.runs * 2} (${tree === 'head' ? 'this tree' : options.against})`);
        runs.push({ tree, record: await runOnce(benchmark, join(scratch, `run-${i}.json`), tree === 'ref' ? ref.root : undefined) });
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    const { rows, failed } = compareRuns(
      runs.filter((r) => r.tree === 'head').map((r) => r.record),
      runs.filter((r) => r.tree === 'ref').map((r) => r.record),
    );
    const file: AgainstFile = {
      format: 'against-v1',
      benchmark: benchmark.name,
      title: benchmark.title,
      ref: { name: options.against!, commit: ref.commit },
      head: { commit: head },
      machine,
      runs,
      rows,
      status: failed ? 'failed' : rows.some((r) => r.worse) ? 'worse' : 'ok',
    };
    files.push(file);
    const out = join(folder, `${benchmark.name}.against.json`);
    await writeFile(out, `${JSON.stringify(file, null, 2)}\n`);
    console.log(`\n${againstText(file)}\nWrote ${out}\n`);
  }
  if (options.record && files.length > 0) {
    const record: AgainstRecord = { format: 'against-list-v1', date: new Date().toISOString(), files };
    await writeFile(join(paths.resultsDir, 'against.json'), `${JSON.stringify(record, null, 2)}\n`);
    await writePerformanceDoc(paths);
    console.log(`Recorded: ${join(paths.resultsDir, 'against.json')}, ${paths.doc} regenerated.\n`);
  }
  console.log('Summary:');
  for (const f of files) console.log(`  ${f.benchmark}: ${f.status === 'ok' ? 'no guarded figure worse' : f.status === 'worse' ? 'WORSE than the ref' : 'FAILED (invalid or did not run)'}`);
  return files.some((f) => f.status !== 'ok') ? 1 : 0;
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
  if (options.against !== undefined) return against(options, runnable, machine, folder, paths);

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
