/**
 * The guard against a regression (`npm run bench -- <names> --against <ref>`, bench/lib/against.ts): which figures it
 * guards, the alternating order, the ratios with their side-by-side spread, and the runner end to end against this
 * repository's own HEAD checked out in a worktree, with the fixture benchmarks of test/bench/fixtures.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { compareRuns, GUARD_WORSE_RATIO, isGuarded, runOrder, type AgainstFile, type AgainstRecord } from '../../bench/lib/against.ts';
import type { Metric } from '../../bench/lib/benchmark.ts';
import { renderPerformanceDoc } from '../../bench/lib/performance-doc.ts';
import type { RunRecord } from '../../bench/lib/summary.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

const conditions = { date: '2026-11-29T02:00:00.000Z', loadAverageStart: [1, 1, 1] as [number, number, number], loadAverageEnd: [1, 1, 1] as [number, number, number], freeMemoryGiB: 10 };
function run(values: Record<string, number>): RunRecord {
  const metrics: Metric[] = Object.entries(values).map(([key, value]) => ({ key, label: key.replaceAll('_', ' '), unit: key.endsWith('_ms') ? 'ms' : key.endsWith('_us') ? 'µs' : '/s', value }));
  return { ok: true, conditions, result: { metrics, invalid: [], setup: 'synthetic', parameters: {} } };
}

describe('the guard against a ref', () => {
  it('guards every p99 and every CPU cost per unit of work, and nothing else', () => {
    for (const key of ['overhead_p99_ms', 'inbox_list_p99_ms', 'engine_cpu_per_turn_us', 'botlink_cpu_us_per_delivery', 'plain_cpu_per_request_us', 'p99']) expect(isGuarded(key), key).toBe(true);
    for (const key of ['overhead_p50_ms', 'answered_per_second', 'engine_cpu_percent', 'rss_peak_mib', 'prompts', 'ap99x']) expect(isGuarded(key), key).toBe(false);
  });

  it('alternates the trees so that neither always runs first', () => {
    expect(runOrder(3)).toEqual(['head', 'ref', 'ref', 'head', 'head', 'ref']);
  });

  it('gives the ratio of the medians, the spread of runs side by side, and fails a guarded figure more than 15% worse', () => {
    const ref = [run({ overhead_p99_ms: 10, engine_cpu_per_turn_us: 1000, answered_per_second: 500 }), run({ overhead_p99_ms: 12, engine_cpu_per_turn_us: 1100, answered_per_second: 480 })];
    const head = [run({ overhead_p99_ms: 14, engine_cpu_per_turn_us: 1050, answered_per_second: 250 }), run({ overhead_p99_ms: 13.2, engine_cpu_per_turn_us: 1100, answered_per_second: 240 })];
    const { rows, failed } = compareRuns(head, ref);
    expect(failed).toBe(false);
    const p99 = rows.find((r) => r.key === 'overhead_p99_ms')!;
    expect(p99.ref).toBe(11);
    expect(p99.head).toBeCloseTo(13.6);
    expect(p99.ratio).toBeCloseTo(13.6 / 11);
    expect(p99.spread![0]).toBeCloseTo(1.1);
    expect(p99.spread![1]).toBeCloseTo(1.4);
    expect(p99).toMatchObject({ guarded: true, worse: true });
    // 1075 / 1050 is within the bound.
    expect(rows.find((r) => r.key === 'engine_cpu_per_turn_us')).toMatchObject({ guarded: true, worse: false });
    // Half the throughput is not guarded (a rate is not a cost): reported, never failing.
    expect(rows.find((r) => r.key === 'answered_per_second')).toMatchObject({ guarded: false, worse: false });
    expect(rows.find((r) => r.key === 'answered_per_second')!.ratio).toBeCloseTo(0.5);
    expect(GUARD_WORSE_RATIO).toBe(1.15);
  });

  it('compares nothing when a run of either tree was invalid', () => {
    const invalid: RunRecord = { ok: true, conditions, result: { metrics: [], invalid: ['3 prompts unanswered'], setup: '', parameters: {} } };
    expect(compareRuns([run({ overhead_p99_ms: 10 })], [invalid]).failed).toBe(true);
  });

  it('renders the last recorded comparison into docs/performance.md', () => {
    const file: AgainstFile = {
      format: 'against-v1',
      benchmark: 'phone-calls',
      title: 'Phone calls',
      ref: { name: 'main', commit: 'abc123def456' },
      head: { commit: 'fedcba654321+changes' },
      machine: { cpus: 2, cpuModel: 'x', memoryGiB: 24, os: 'linux', node: 'v24', undici: '7' } as AgainstFile['machine'],
      runs: [
        { tree: 'head', record: run({ overhead_p99_ms: 20 }) },
        { tree: 'ref', record: run({ overhead_p99_ms: 10 }) },
      ],
      rows: compareRuns([run({ overhead_p99_ms: 20 })], [run({ overhead_p99_ms: 10 })]).rows,
      status: 'worse',
    };
    const record: AgainstRecord = { format: 'against-list-v1', date: '2026-11-29T02:30:00.000Z', files: [file] };
    const doc = renderPerformanceDoc('# Doc\n\n<!-- bench:against -->\n', new Map([['against', record]]));
    expect(doc).toContain('against `main` (`abc123def456`), 1 run each, alternating, 2026-11-29 02:30 UTC');
    expect(doc).toMatch(/\| overhead p99 ms, ms \| 10\.00 \| 20\.00 \| 2\.00× \| 2\.00×–2\.00× \| WORSE \(> 1\.15×\) \|/);
    expect(doc).toContain('**WORSE than main: overhead p99 ms.**');
  });
});

describe('npm run bench -- --against HEAD', { timeout: 120_000 }, () => {
  const made: string[] = [];
  let worktree = '';
  afterAll(async () => {
    await Promise.all(made.map((f) => rm(f, { recursive: true, force: true })));
    if (worktree && existsSync(worktree)) execFileSync('git', ['worktree', 'remove', '--force', worktree], { cwd: root });
  });

  it('checks the ref out in a worktree, runs both trees alternately and writes the ratios; --record keeps them', async () => {
    const results = await mkdtemp(join(tmpdir(), 'bench-against-test-'));
    made.push(results);
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    worktree = join(tmpdir(), `botlink-against-${commit.slice(0, 12)}`);
    const child = spawn(process.execPath, ['bench/run.ts', 'tiny', '--runs', '2', '--against', 'HEAD', '--record'], {
      cwd: root,
      env: { PATH: process.env.PATH, BENCH_DIR: join(fixtures, 'answered'), BENCH_RESULTS_DIR: results, BENCH_TEMPLATE: join(fixtures, 'template.md'), BENCH_DOC: join(results, 'performance.md') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, out).toBe(0);
    expect(existsSync(join(worktree, 'bench', 'run-one.ts'))).toBe(true);
    expect(out).toContain('tiny: this tree against HEAD, 2 runs each, alternating');
    expect(out).toMatch(/turn p99, ms\s+1[01]\.\d0\s+1[01]\.\d0\s+\d\.\d\d×/);
    expect(out).toContain('No guarded figure more than 15% worse than HEAD.');

    const folder = join(results, 'runs', (await readdir(join(results, 'runs')))[0]!);
    const file = JSON.parse(await readFile(join(folder, 'tiny.against.json'), 'utf8')) as AgainstFile;
    expect(file.runs.map((r) => r.tree)).toEqual(['head', 'ref', 'ref', 'head']);
    expect(file.ref.commit).toBe(commit.slice(0, 12));
    expect(file.status).toBe('ok');
    // The ref's runs ran in the ref's tree, as separate processes.
    const pids = file.runs.map((r) => (r.record.ok ? r.record.result.parameters.pid : null));
    expect(new Set(pids).size).toBe(4);
    const recorded = JSON.parse(await readFile(join(results, 'against.json'), 'utf8')) as AgainstRecord;
    expect(recorded.files.map((f) => f.benchmark)).toEqual(['tiny']);
  });
});
