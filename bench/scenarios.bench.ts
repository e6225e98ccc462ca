/**
 * A CI suite of test scenarios (docs/scenarios.md; issue 39's target): 50 scripted web-chat scenarios of a small
 * outdoor shop (bench/lib/scenario-shop.ts: one to three knowledge questions each, some the pages do not answer, some
 * ending with a request for a person), run with `npm run cli -- test <folder> --json` against the built-in answerer
 * (no language model). Target: the whole suite in ≤ 30 s on 2 cores. Also measured: each scenario's time from the
 * run being asked for to done and its play on the engine (p50, p99), each turn's, and the engine's CPU.
 *
 * Processes: the service as `npm start` runs it (`node src/main.ts`, PGlite on disk in a temporary DATA_DIR, no
 * LLM), the CLI (`node src/cli.ts test`, the load generator, as a CI job runs it), and this one, which sets up the
 * workspace and its pages over the API, writes the scenario files, and reads the runs back afterwards.
 *
 * Warm-up: the suite is run once with the CLI unmeasured (SCENARIOS_BENCH_WARMUP_SUITES, default 1), which also
 * creates the scenarios; the measured run updates them by name, as a CI job's second run does. A suite whose CLI does
 * not exit 0 (a scenario that did not pass, a request refused), or that does not report every scenario, makes the run
 * invalid: a scenario that failed may have taken another path.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, freePort, startServiceProcess, type ServiceProcess } from '../harness/service-process.ts';
import type { Metric, RunResult } from './lib/benchmark.ts';
import { envNumber, progress } from './lib/benchmark.ts';
import { scenarioSuite, shopPages, SUITE_SIZE } from './lib/scenario-shop.ts';
import { round, summarize } from './lib/stats.ts';

export const name = 'scenarios';
export const title = 'A suite of 50 web-chat scenarios through the CLI';

const ADMIN_TOKEN = `bench-admin-${randomBytes(16).toString('hex')}`;
const root = new URL('../', import.meta.url).pathname;
const TARGET_SECONDS = 30;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  seconds: number;
}

interface CliReport {
  scenarios: { name: string; runs: number; passed: number; pass_rate: number; failures: { run: number; turn: number; expectation: string; got: string }[] }[];
  pass_rate: number;
  passed: boolean;
}

interface RunView {
  id: string;
  runs: number;
  passed: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  transcripts: { turns: { ms: number }[] }[];
}

/** The CLI as a CI job runs it: its own process, the service's URL and an owner's token from the environment. */
function runCli(folder: string, url: string, token: string): Promise<CliRun> {
  const started = performance.now();
  const child = spawn(process.execPath, ['src/cli.ts', 'test', folder, '--json'], {
    cwd: root,
    env: { ...process.env, BOTLINK_URL: url, BOTLINK_TOKEN: token, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 }));
  });
}

/** What is wrong with a suite's CLI run, one sentence; null when it exited 0 and reported every scenario passed. */
function suiteProblem(what: string, run: CliRun): string | null {
  let report: CliReport | undefined;
  try {
    report = JSON.parse(run.stdout) as CliReport;
  } catch {
    // Not JSON: the CLI failed before it could report (stderr says why).
  }
  if (run.code === 0 && report?.passed && report.scenarios.length === SUITE_SIZE) return null;
  const failed = (report?.scenarios ?? []).filter((s) => s.passed < s.runs);
  const detail = failed
    .slice(0, 5)
    .map((s) => `${JSON.stringify(s.name)}: ${s.failures.map((f) => `turn ${f.turn} expected ${f.expectation}, got ${f.got}`).join('; ')}`)
    .join(' | ');
  return `The ${what} suite's CLI exited ${run.code} with ${report?.scenarios.length ?? 'no'} scenarios reported${failed.length ? `, ${failed.length} not passed (${detail})` : ''}${run.stderr.trim() ? `: ${run.stderr.trim().slice(0, 500)}` : ''}.`;
}

/** CPU time of a process so far, in ms, from /proc (utime + stime, 100 ticks a second); NaN where it cannot be read. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

export async function run(): Promise<RunResult> {
  const parameters = {
    scenarios: SUITE_SIZE,
    pages: shopPages.length,
    warmupSuites: envNumber('SCENARIOS_BENCH_WARMUP_SUITES', 1, { min: 0 }),
    database: 'pglite on disk',
    model: 'none (the built-in answerer)',
  };
  const suite = scenarioSuite();
  const work = mkdtempSync(join(tmpdir(), 'botlink-bench-scenarios-'));
  const folder = join(work, 'suite');
  mkdirSync(folder);
  suite.forEach((scenario, i) => writeFileSync(join(folder, `${String(i + 1).padStart(2, '0')}.scenario.json`), JSON.stringify(scenario, null, 2)));
  const invalid: string[] = [];
  let service: ServiceProcess | undefined;
  try {
    service = await startServiceProcess({
      port: await freePort(),
      // A first start on PGlite migrates a new database; on a busy 2-core machine that has taken over 20 s.
      readyTimeoutMs: 120_000,
      env: { DATA_DIR: join(work, 'data'), MASTER_KEY: randomBytes(32).toString('hex'), ADMIN_TOKEN, LOG_LEVEL: 'warn' },
    });
    const { url } = service;
    const created = await api(url, 'POST', '/v1/admin/workspaces', ADMIN_TOKEN, { name: 'Trailhead Outdoor', owner_email: 'owner@trailhead.example' });
    const owner = (created.owner as { token: string }).token;
    const syncKey = (await api(url, 'POST', '/v1/keys/sync', owner)).key as string;
    const synced = await fetch(`${url}/v1/sync/batch`, { method: 'POST', headers: { 'x-sync-key': syncKey, 'content-type': 'application/json' }, body: JSON.stringify({ upserts: shopPages }) });
    if (!synced.ok) throw new Error(`syncing the pages failed: ${synced.status} ${await synced.text()}`);

    for (let i = 0; i < parameters.warmupSuites; i++) {
      progress(name, `warm-up: the suite of ${SUITE_SIZE} scenarios through the CLI, unmeasured`);
      const warm = await runCli(folder, url, owner);
      const problem = suiteProblem('warm-up', warm);
      if (problem) invalid.push(problem);
    }

    progress(name, `measured: the suite of ${SUITE_SIZE} scenarios through the CLI`);
    const warningsBefore = service.warnings.length;
    const engineCpuBefore = cpuMs(service.pid);
    const startedAt = Date.now();
    const measured = await runCli(folder, url, owner);
    const engineCpu = cpuMs(service.pid) - engineCpuBefore;
    const problem = suiteProblem('measured', measured);
    if (problem) invalid.push(problem);

    // Each scenario's run of the measured suite, read back over the API.
    const listed = (await api(url, 'GET', '/v1/scenarios', owner)).scenarios as { name: string; last_run: { id: string } | null }[];
    const runs: RunView[] = [];
    for (const s of listed) {
      if (!s.last_run) continue;
      const view = (await api(url, 'GET', `/v1/scenario-runs/${s.last_run.id}`, owner)) as unknown as RunView;
      if (view.finished_at !== null && Date.parse(view.created_at) >= startedAt) runs.push(view);
    }
    if (runs.length !== SUITE_SIZE) invalid.push(`${runs.length} of ${SUITE_SIZE} scenarios have a finished run of the measured suite.`);
    const warnings = service.warnings.slice(warningsBefore).map((w) => w.msg ?? '');
    return summarizeRun(parameters, measured, runs, { startedAt, engineCpuMs: engineCpu, warnings }, invalid);
  } finally {
    await service?.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

function summarizeRun(
  parameters: Record<string, unknown> & { warmupSuites: number },
  measured: CliRun,
  runs: RunView[],
  engine: { startedAt: number; engineCpuMs: number; warnings: string[] },
  invalid: string[],
): RunResult {
  const at = (iso: string | null) => Date.parse(iso ?? '');
  const askedToDone = summarize(runs.map((r) => at(r.finished_at) - at(r.created_at)));
  const play = summarize(runs.map((r) => at(r.finished_at) - at(r.started_at)));
  const turnMs = runs.flatMap((r) => r.transcripts.flatMap((t) => t.turns.map((turn) => turn.ms)));
  const turns = summarize(turnMs);
  const firstAsked = Math.min(...runs.map((r) => at(r.created_at)));
  const lastDone = Math.max(...runs.map((r) => at(r.finished_at)));
  const seconds = measured.seconds;
  const metrics: Metric[] = [
    { key: 'suite_seconds', label: `the suite of ${SUITE_SIZE} scenarios, the CLI's start to its exit`, unit: 's', digits: 1, value: round(seconds, 1), target: { op: '<=', value: TARGET_SECONDS } },
    { key: 'cli_start_seconds', label: "of which the CLI's start to the first run asked (loading, checking and saving the scenarios)", unit: 's', digits: 2, value: round((firstAsked - engine.startedAt) / 1000, 2) },
    { key: 'runs_seconds', label: 'of which the first run asked to the last one done', unit: 's', digits: 2, value: round((lastDone - firstAsked) / 1000, 2) },
    { key: 'scenario_p50_ms', label: "a scenario's run, asked to done (waiting for the engine included), p50", unit: 'ms', value: round(askedToDone.p50, 0), digits: 0 },
    { key: 'scenario_p99_ms', label: "a scenario's run, asked to done, p99", unit: 'ms', value: round(askedToDone.p99, 0), digits: 0 },
    { key: 'play_p50_ms', label: "a scenario's play on the engine (claimed to written), p50", unit: 'ms', value: round(play.p50, 0), digits: 0 },
    { key: 'play_p99_ms', label: "a scenario's play on the engine, p99", unit: 'ms', value: round(play.p99, 0), digits: 0 },
    { key: 'turn_p50_ms', label: 'a turn (message to reply, as the run measured it), p50', unit: 'ms', value: round(turns.p50, 1), digits: 1 },
    { key: 'turn_p99_ms', label: 'a turn, p99', unit: 'ms', value: round(turns.p99, 1), digits: 1 },
    { key: 'turns', label: 'turns played', unit: '', value: turnMs.length },
    { key: 'engine_cpu_percent', label: "the engine's CPU over the suite, % of a core", unit: '%', value: round(engine.engineCpuMs / 10 / Math.max(seconds, 1e-9), 0) },
    { key: 'engine_cpu_per_turn_ms', label: "the engine's CPU per turn", unit: 'ms', digits: 1, value: round(engine.engineCpuMs / Math.max(1, turnMs.length), 1) },
  ];
  const setup =
    `${SUITE_SIZE} scripted web-chat scenarios (${turnMs.length} turns: one to three knowledge questions each, five the pages do not answer, ` +
    `five ending with a request for a person) of a shop with ${String(parameters.pages)} knowledge pages, one play each, run with ` +
    '`npm run cli -- test <folder> --json` (its own process; at most 10 runs asked for at once, polled every 0.5 s) against the service as ' +
    '`npm start` runs it (PGlite on disk, no language model: the built-in answerer; 2 runs played at once) in a process of its own; ' +
    `${parameters.warmupSuites} unmeasured run of the suite first, which also created the scenarios.`;
  return {
    metrics,
    invalid,
    setup,
    parameters,
    details: {
      askedToDoneMs: askedToDone,
      playMs: play,
      turnMs: turns,
      cliStderr: measured.stderr.slice(0, 2_000),
      engineWarnings: engine.warnings.slice(0, 20),
    },
  };
}
