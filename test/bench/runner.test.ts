/**
 * The benchmark runner end to end (`node bench/run.ts`), pointed by BENCH_DIR at fixture benchmarks that measure
 * nothing (test/bench/fixtures) and by BENCH_RESULTS_DIR at a temporary folder, so no tracked file is touched.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { ResultFile } from '../../bench/lib/summary.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((f) => rm(f, { recursive: true, force: true })));
});

async function runner(fixture: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; results: string }> {
  const results = await mkdtemp(join(tmpdir(), 'bench-runner-test-'));
  folders.push(results);
  const child = spawn(process.execPath, ['bench/run.ts', ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      BENCH_DIR: join(fixtures, fixture),
      BENCH_RESULTS_DIR: results,
      BENCH_TEMPLATE: join(fixtures, 'template.md'),
      BENCH_DOC: join(results, 'performance.md'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr, results };
}

async function onlyRunFolder(results: string): Promise<string> {
  const runs = await readdir(join(results, 'runs'));
  expect(runs).toHaveLength(1);
  return join(results, 'runs', runs[0]!);
}

// Each case starts the runner and a node process per run; on a loaded 2-core machine that is seconds, not the suite's 20.
describe('npm run bench', { timeout: 60_000 }, () => {
  it('runs each run in its own process and writes the runs and their summary to a folder named by the time and label', async () => {
    const { code, stdout, stderr, results } = await runner('answered', ['--runs', '2', '--label', 'e2e test']);
    expect(code, stdout + stderr).toBe(0);
    const folder = await onlyRunFolder(results);
    expect(folder).toMatch(/\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ-e2e-test$/);
    // Only the converted benchmark ran; the one in the old format is listed and skipped.
    expect(await readdir(folder)).toEqual(['tiny.json']);
    expect(stdout).toContain('legacy: not converted yet');
    // Nothing but the runs folder was written: no tracked result file without --record.
    expect(await readdir(results)).toEqual(['runs']);

    const file = JSON.parse(await readFile(join(folder, 'tiny.json'), 'utf8')) as ResultFile;
    expect(file.runs).toHaveLength(2);
    const pids = file.runs.map((r) => (r.ok ? r.result.parameters.pid : null));
    expect(new Set(pids).size, 'each run in a process of its own').toBe(2);
    expect(file.summary.metrics.map((m) => m.key)).toEqual(['turn_p99_ms', 'rate', 'peer_rate', 'ratio_rate']);
    expect(file.summary.metrics.find((m) => m.key === 'ratio_rate')).toMatchObject({ verdict: 'miss', runsMet: 0, runsCounted: 2 });
    expect(file.summary.status).toBe('miss');
    expect(file.machine.cpus).toBeGreaterThan(0);
    for (const run of file.runs) expect(run.conditions?.loadAverageStart).toHaveLength(3);

    // A missed target is reported, and still exits 0 (checked above).
    expect(stdout).toMatch(/our rate, \/s\s+100\s+100–100\s+≥ peer rate\s+MISS \(0\/2\)/);
    expect(stderr).toContain('[tiny] running in process');
  });

  it('with --record, copies the result file beside the others and regenerates the doc from the template', async () => {
    const { code, stdout, stderr, results } = await runner('answered', ['--runs', '1', '--record']);
    expect(code, stdout + stderr).toBe(0);
    expect((await readdir(results)).sort()).toEqual(['performance.md', 'runs', 'tiny.json']);
    const folder = await onlyRunFolder(results);
    expect(await readFile(join(results, 'tiny.json'), 'utf8')).toBe(await readFile(join(folder, 'tiny.json'), 'utf8'));
    const doc = await readFile(join(results, 'performance.md'), 'utf8');
    expect(doc).toMatch(/\| turn p99, ms \| 1[01]\.00 \| {2}\| ≤ 25 \| pass \(1\/1\) \|/);
    expect(doc).toContain('*Not measured yet.*');
  });

  it('fails when a run leaves a prompt unanswered, printing that sentence first, and when a run throws', async () => {
    const { code, stdout, stderr, results } = await runner('unanswered', ['--runs', '2']);
    expect(code, stdout + stderr).toBe(1);

    const lossy = stdout.slice(stdout.indexOf('== lossy'));
    const afterRuns = lossy.slice(lossy.lastIndexOf('-- lossy: run 2 of 2')).split('\n').filter((l) => l.trim() !== '');
    expect(afterRuns[1]).toBe('INVALID (run 1): 1 PROMPT UNANSWERED: CALL 3, TURN 7');
    expect(afterRuns[2]).toBe('INVALID (run 2): 1 PROMPT UNANSWERED: CALL 3, TURN 7');
    expect(lossy.indexOf('INVALID (run 1)')).toBeLessThan(lossy.indexOf('turn p99, ms'));
    expect(stdout).toContain('lossy FAILED');

    const crashing = stdout.slice(stdout.indexOf('== crashing'), stdout.indexOf('== lossy'));
    expect(crashing).toContain('RUN 1 FAILED: it exited with code 1.');
    expect(crashing).toContain('the integrator could not start');

    const folder = await onlyRunFolder(results);
    const file = JSON.parse(await readFile(join(folder, 'lossy.json'), 'utf8')) as ResultFile;
    expect(file.summary.status).toBe('failed');
    expect(file.summary.invalid).toHaveLength(2);
  });
});
