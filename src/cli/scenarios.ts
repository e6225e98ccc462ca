/**
 * `test`: a folder (or one file) of `*.scenario.json` run against a running service, for CI (docs/scenarios.md, "In
 * CI"). Like `replay` it asks the service's HTTP API with an owner's or admin's token (the engine, the integrator's
 * key and the knowledge base are the service's): each scenario is created or updated by name, run, and polled until
 * done. Exit 0 when every scenario's pass rate reaches --min-pass, 1 when one does not (or the service refused), 2 on
 * a usage or schema error.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { basename, join } from 'node:path';
import { AppError, errorText } from '../errors.ts';
import { junitReport, type SuiteScenario } from '../scenarios/junit.ts';
import { MAX_SCENARIO_RUNS, MAX_SCENARIOS } from '../scenarios/limits.ts';
import { checkScenario } from '../scenarios/scenario-check.ts';
import type { Scenario } from '../scenarios/scenario-schema.ts';
import type { ScenarioRunView } from '../scenarios/scenarios-service.ts';
import { UsageError, type CliCommand, type CliOptions } from './context.ts';

const SUFFIX = '.scenario.json';
/** How often a run is asked about, and how long the suite may take. */
const POLL_MS = 500;
const SUITE_DEADLINE_MS = 30 * 60_000;
/** Runs asked for at once: the service keeps at most 20 open per workspace (429 beyond; then the CLI waits). */
const RUNS_AT_ONCE = 10;

/** The service refused something (exit 1), or refused a scenario as written (exit 2). */
class Refused extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.exitCode = exitCode;
  }
}

interface Loaded {
  file: string;
  scenario: Scenario;
}

const YAML_FILE = /\.scenario\.ya?ml$/;

/**
 * A YAML scenario file (docs/scenarios.md, "Files"): YAML 1.2's core schema, so `on`, `yes` and `no` stay strings
 * and a date stays text, as in JSON; one document. A syntax error names the file, line and column.
 */
function readYaml(file: string, text: string): unknown {
  const document = parseDocument(text, { schema: 'core', prettyErrors: true, uniqueKeys: true });
  const problem = document.errors[0];
  if (problem) {
    const at = problem.linePos?.[0];
    // The parser's message is its sentence, then " at line L, column C:" and the line quoted: said once, up front.
    const sentence = problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new UsageError(`${file}${at ? `:${at.line}:${at.col}` : ''}: not a YAML file (${sentence}).`);
  }
  return document.toJS({ maxAliasCount: 100 });
}

/** The scenario files named: the file itself, or the folder's `*.scenario.json` and `.yaml` (not its subfolders), by name. */
async function scenarioFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    throw new UsageError(`${path} does not exist.`);
  }
  const files = info.isDirectory() ? (await readdir(path)).filter((f) => f.endsWith(SUFFIX) || YAML_FILE.test(f)).sort().map((f) => join(path, f)) : [path];
  if (files.length === 0) throw new UsageError(`${path} has no ${SUFFIX} or .scenario.yaml files.`);
  if (files.length > MAX_SCENARIOS) throw new UsageError(`${path} has ${files.length} scenarios; a workspace keeps at most ${MAX_SCENARIOS}.`);
  return files;
}

/** Each file read and checked as the service checks it (src/scenarios/scenario-check.ts); a problem is a usage error. */
async function load(files: string[]): Promise<Loaded[]> {
  const loaded: Loaded[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    let body: unknown;
    if (/\.ya?ml$/i.test(file)) {
      body = readYaml(file, text);
    } else {
      try {
        body = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`${file}: not a JSON file (${errorText(err)}).`);
      }
    }
    try {
      loaded.push({ file, scenario: checkScenario(body) });
    } catch (err) {
      if (err instanceof AppError) throw new UsageError(`${file}: ${err.message}`);
      throw err;
    }
  }
  const seen = new Map<string, string>();
  for (const { file, scenario } of loaded) {
    const other = seen.get(scenario.name);
    if (other) throw new UsageError(`${file} and ${other} both name the scenario ${JSON.stringify(scenario.name)}; names are one per workspace.`);
    seen.set(scenario.name, file);
  }
  return loaded;
}

function numberOption(values: CliOptions, name: 'runs' | 'min-pass'): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (name === 'runs' && !(Number.isInteger(n) && n >= 1 && n <= MAX_SCENARIO_RUNS)) throw new UsageError(`--runs must be a whole number from 1 to ${MAX_SCENARIO_RUNS}.`);
  if (name === 'min-pass' && !(raw.trim() !== '' && Number.isFinite(n) && n >= 0 && n <= 1)) throw new UsageError('--min-pass must be a number from 0 to 1, like 0.9.');
  return n;
}

/** The service's API with the token; an answer other than the ones expected is a Refused. */
function client(base: string, token: string) {
  return async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T; retryAfter: number | null }> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new Refused(`the service at ${base} could not be reached: ${errorText(err)}`, 1);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: shown as it came.
    }
    const retry = Number(res.headers.get('retry-after'));
    return { status: res.status, body: parsed as T, retryAfter: Number.isFinite(retry) && retry > 0 ? retry : null };
  };
}

function refusal(status: number, body: unknown, what: string, exitCode = 1): Refused {
  const message = (body as { error?: { message?: string } } | null)?.error?.message ?? String(body).slice(0, 300);
  return new Refused(`${what}: the service answered HTTP ${status}: ${message}`, exitCode);
}

async function test(values: CliOptions, positionals: string[]): Promise<number> {
  if (positionals.length !== 1) throw new UsageError(`test takes one file or folder of ${SUFFIX} files.`);
  const token = values.token ?? process.env.BOTLINK_TOKEN;
  if (!token) throw new UsageError("--token (or BOTLINK_TOKEN) is required: an owner's or admin's token.");
  const base = (values.url ?? process.env.BOTLINK_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
  const runs = numberOption(values, 'runs');
  const minPass = numberOption(values, 'min-pass') ?? 1;
  const suite = await load(await scenarioFiles(positionals[0]!));
  const api = client(base, token);

  let results: SuiteScenario[];
  try {
    results = await runSuite(api, suite, runs);
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    console.error(`botlink cli: ${err.message}`);
    return err.exitCode;
  }
  const totalRuns = results.reduce((n, r) => n + r.runs, 0);
  const totalPassed = results.reduce((n, r) => n + r.passed, 0);
  const suiteRate = totalRuns === 0 ? 0 : totalPassed / totalRuns;
  const below = results.filter((r) => r.pass_rate < minPass);
  if (values.junit) await writeFile(values.junit, junitReport(results, minPass), 'utf8');
  if (values.json) {
    const scenarios = results.map(({ name, runs: n, passed, pass_rate, failures }) => ({ name, runs: n, passed, pass_rate, failures }));
    console.log(JSON.stringify({ scenarios, pass_rate: suiteRate, min_pass: minPass, passed: below.length === 0 }, null, 2));
  } else {
    console.log(summaryLines(results, suiteRate, minPass, below.length).join('\n'));
  }
  return below.length === 0 ? 0 : 1;
}

/** Creates or updates each scenario by name, runs it, and polls until every run is done. */
async function runSuite(api: ReturnType<typeof client>, suite: Loaded[], runs: number | undefined): Promise<SuiteScenario[]> {
  const listed = await api<{ scenarios: { id: string; name: string }[] }>('GET', '/v1/scenarios');
  if (listed.status !== 200) throw refusal(listed.status, listed.body, 'listing the scenarios');
  const ids = new Map(listed.body.scenarios.map((s) => [s.name, s.id]));
  const saved: { id: string; scenario: Scenario; file: string }[] = [];
  for (const { file, scenario } of suite) {
    const id = ids.get(scenario.name);
    const res = await api<{ scenario: { id: string } }>(id ? 'PUT' : 'POST', id ? `/v1/scenarios/${id}` : '/v1/scenarios', scenario);
    // The service's own check (a judge or persona, a candidate URL its outbound rules refuse): the file is wrong.
    if ([400, 409, 422].includes(res.status)) throw refusal(res.status, res.body, `${basename(file)} was refused`, 2);
    if (res.status !== 200 && res.status !== 201) throw refusal(res.status, res.body, `saving ${basename(file)}`);
    saved.push({ id: res.body.scenario.id, scenario, file });
  }

  const deadline = Date.now() + SUITE_DEADLINE_MS;
  const results = new Map<string, SuiteScenario>();
  const waiting = [...saved];
  const running = new Map<string, { scenario: Scenario; started: number }>();
  while (waiting.length > 0 || running.size > 0) {
    if (Date.now() > deadline) throw new Refused(`the suite did not finish within ${SUITE_DEADLINE_MS / 60_000} minutes`, 1);
    let pause = POLL_MS;
    while (waiting.length > 0 && running.size < RUNS_AT_ONCE) {
      const next = waiting[0]!;
      const res = await api<{ run: { id: string } }>('POST', `/v1/scenarios/${next.id}/runs`, runs === undefined ? {} : { runs });
      if (res.status === 429) {
        pause = Math.max(pause, (res.retryAfter ?? 1) * 1000);
        break;
      }
      if (res.status !== 202) throw refusal(res.status, res.body, `running ${basename(next.file)}`);
      waiting.shift();
      running.set(res.body.run.id, { scenario: next.scenario, started: Date.now() });
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    for (const [runId, { scenario, started }] of running) {
      const res = await api<ScenarioRunView>('GET', `/v1/scenario-runs/${runId}`);
      if (res.status !== 200) throw refusal(res.status, res.body, `reading the run of ${JSON.stringify(scenario.name)}`);
      if (res.body.status !== 'done') continue;
      running.delete(runId);
      const run = res.body;
      results.set(scenario.name, {
        name: scenario.name,
        channel: scenario.channel,
        runs: run.runs,
        passed: run.passed,
        pass_rate: run.pass_rate ?? 0,
        seconds: (Date.now() - started) / 1000,
        failures: run.failures,
      });
    }
  }
  // In the files' order.
  return suite.map(({ scenario }) => results.get(scenario.name)!);
}

function summaryLines(results: SuiteScenario[], suiteRate: number, minPass: number, below: number): string[] {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${r.pass_rate >= minPass ? 'PASS' : 'FAIL'}  ${r.name} (${r.channel})  ${r.passed}/${r.runs} runs passed`);
    for (const f of r.failures) lines.push(`      run ${f.run}, turn ${f.turn}: expected ${f.expectation}; got ${f.got}`);
  }
  const total = results.reduce((n, r) => n + r.runs, 0);
  const passed = results.reduce((n, r) => n + r.passed, 0);
  lines.push(
    `${results.length} scenario${results.length === 1 ? '' : 's'}, ${passed} of ${total} runs passed (${Math.round(suiteRate * 100)} %)` +
      (below === 0 ? `; every scenario reached --min-pass ${minPass}.` : `; ${below} below --min-pass ${minPass}.`),
  );
  return lines;
}

export const scenarioCommands: CliCommand[] = [
  {
    name: 'test',
    usage: `test <file|folder> [--url <service url>] [--token <token>] [--runs <1-${MAX_SCENARIO_RUNS}>] [--min-pass <0-1>] [--json] [--junit <file>]
      runs the ${SUFFIX} files of the folder (or the one file) on the running service at --url (or BOTLINK_URL, default
      http://localhost:8080) with an owner's or admin's --token (or BOTLINK_TOKEN): each is created or updated by name,
      run (--runs times, default the scenario's own), and its pass rate printed; --junit writes a JUnit XML report.
      Exit 1 when a scenario's pass rate is below --min-pass (default 1) or the service refuses; 2 when a file is not a
      valid scenario (docs/scenarios.md).`,
    run: test,
  },
];
