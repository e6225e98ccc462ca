/**
 * The soak: the service as operators run it, under the phone benchmark's load plus WhatsApp and website-chat traffic
 * for minutes, watching whether anything grows, slows down or goes missing; with several engines, one of them is
 * SIGKILLed midway and started again, and the others must take its work over.
 *
 *   npm run soak                              10 minutes on one engine (the default)
 *   npm run soak -- --engines 3               three engines behind HAProxy, pgbouncer and PostgreSQL; one killed midway
 *   npm run soak -- --minutes 3 | --short     any duration (decimals allowed); --short is 1 minute
 *   npm run soak -- --calls 200               fewer phone calls (default 1,000, a prompt every 2 s each)
 *   npm run soak -- --record                  also write bench/results/soak-<database>[-<n>-engines].json
 *   DATABASE_URL=postgres://…/soak npm run soak   on that PostgreSQL (else PGlite in a temporary DATA_DIR; several
 *                                             engines need PostgreSQL: default postgres://postgres@127.0.0.1:5432)
 *
 * The parts: bench/soak/deployment.ts (the engines, HAProxy, pgbouncer), bench/soak/load.ts (everyone outside),
 * bench/soak/checks.ts (nothing lost or answered twice, the take-over), bench/soak/report.ts (the figures).
 * Exit code 0 when there was no error, 1 otherwise, 2 for a wrong option.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { machineInfo, runConditions } from '../lib/report.ts';
import { startCallersProcess, type CallersProcess } from '../lib/callers-process.ts';
import type { CallersResults } from '../processes/phone-callers.ts';
import { check, outstanding, readStore, takeOver } from './checks.ts';
import { startDeployment, type Deployment } from './deployment.ts';
import { BRIDGE_TOKEN, configure, LOAD, newWorkspaces, startPeers, Traffic } from './load.ts';
import { buildReport, printReport, toSample, writeReport, type EngineFigures, type Sample } from './report.ts';

const usage = `usage: npm run soak -- [--minutes N | --short] [--engines N] [--calls N] [--record] [--keep]
  --minutes N   how long the traffic runs (default 10; decimals allowed)
  --short       1 minute
  --engines N   engines behind HAProxy with pgbouncer (default 1); with 2 or more, one is SIGKILLed midway and restarted
  --calls N     concurrent phone calls, each speaking every 2 s (default 1000: the phone benchmark's load)
  --record      write the results to bench/results/ (else to a temporary folder, named at the end)
  --keep        keep the database (PGlite's DATA_DIR, or the several engines' PostgreSQL database) afterwards
DATABASE_URL    a PostgreSQL database to run on; without it, PGlite in a temporary DATA_DIR (one engine only)`;

const SAMPLE_MS = 5_000;
/** Every this many samples the heap is also read after a full collection (30 s). */
const GC_EVERY = 6;
const SETTLE_MS = 60_000;
/** With a kill: the work the killed engine held waits for its lease (a WhatsApp message's is 3 minutes today). */
const SETTLE_AFTER_KILL_MS = 240_000;
/** The killed engine starts again this long after the kill. */
const RESTART_AFTER_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const progress = (line: string) => process.stderr.write(`  [soak] ${line}\n`);

function options() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string' },
      short: { type: 'boolean', default: false },
      engines: { type: 'string' },
      record: { type: 'boolean', default: false },
      calls: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const positive = (name: string, raw: string | undefined, fallback: number) => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new RangeError(`--${name} must be a positive number (got ${JSON.stringify(raw)}).\n${usage}`);
    return n;
  };
  if (values.short && values.minutes !== undefined) throw new RangeError(`--short and --minutes exclude each other.\n${usage}`);
  return {
    minutes: values.short ? 1 : positive('minutes', values.minutes, 10),
    engines: Math.round(positive('engines', values.engines, 1)),
    record: values.record,
    calls: Math.round(positive('calls', values.calls, 1_000)),
    keep: values.keep,
  };
}

/** Samples every engine every SAMPLE_MS (a full collection every GC_EVERY-th), from the start of the traffic. */
function startSampling(deployment: Deployment, t0: number, samples: Map<string, Sample[]>) {
  let n = 0;
  const timer = setInterval(() => {
    n++;
    for (const e of deployment.engines) {
      void e.probe.sample(n % GC_EVERY === 0).then((s) => {
        if (s) samples.get(e.name)!.push(toSample(s, Math.round((performance.now() - t0) / 1000)));
      });
    }
    if (n % 12 === 0) {
      const line = deployment.engines.map((e) => `${e.name} RSS ${samples.get(e.name)!.at(-1)?.rssMiB ?? '–'} MiB`).join(', ');
      progress(`${Math.round((performance.now() - t0) / 1000)} s: ${line}`);
    }
  }, SAMPLE_MS);
  return () => clearInterval(timer);
}

async function main(): Promise<number> {
  const opts = options();
  const seconds = Math.round(opts.minutes * 60);
  const databaseUrl = process.env.DATABASE_URL?.trim() || null;
  const machine = await machineInfo();
  const conditions = runConditions();
  const work = mkdtempSync(join(tmpdir(), 'botlink-soak-'));
  const number = `+3120${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  const workspaces = newWorkspaces();
  const killing = opts.engines > 1;
  const peers = await startPeers(workspaces);
  const deployment = await startDeployment({ engines: opts.engines, databaseUrl, work, graph: peers.graph });
  progress(`${seconds} s, ${deployment.describe}: ${opts.calls} calls speaking every ${LOAD.promptIntervalMs} ms, ` +
    `${LOAD.whatsappPerSecond} WhatsApp messages/s, ${LOAD.chatsPerSecondPerWorkspace * LOAD.workspaces} website chats/s` +
    (killing ? `; engine e1 SIGKILLed at ${seconds / 2} s and started again ${RESTART_AFTER_MS / 1000} s later` : ''));
  const samples = new Map(deployment.engines.map((e) => [e.name, [] as Sample[]]));
  let callers: CallersProcess | undefined;
  let traffic: Traffic | undefined;
  let stopSampling = () => {};
  const run = {
    callerResults: undefined as CallersResults | undefined,
    dropped: 0,
    connectErrors: 0,
    settled: false,
    trafficSeconds: 0,
    killAt: null as number | null,
    exitCodes: [] as (number | null)[],
  };
  const figures: EngineFigures[] = [];
  try {
    await configure(deployment.url, peers, workspaces, number);
    const wsUrl = `${deployment.url.replace('http', 'ws')}/v1/phone/ws`;
    const intervalMs = LOAD.promptIntervalMs;
    callers = startCallersProcess({ url: wsUrl, token: BRIDGE_TOKEN, number, calls: opts.calls, intervalMs, warmupSeconds: 0, seconds, matchIds: true });
    run.connectErrors = (await callers.next('connected')).connectErrors;
    await sleep(500);

    const t0 = performance.now();
    for (const e of deployment.engines) {
      const first = await e.probe.sample(true);
      if (first) samples.get(e.name)!.push(toSample(first, 0));
      e.cpuAtStartMicros = first?.cpuMicros ?? 0;
      e.probe.start();
    }
    traffic = new Traffic(deployment.url, workspaces);
    traffic.start();
    callers.send('start');
    stopSampling = startSampling(deployment, t0, samples);
    const finished = callers.next('finished');
    if (killing) {
      await sleep((seconds / 2) * 1000);
      progress('SIGKILL e1');
      run.killAt = performance.now();
      await deployment.kill(1);
      await sleep(RESTART_AFTER_MS);
      await deployment.restart(1);
      progress('e1 started again');
      await sleep(Math.max(0, t0 + seconds * 1000 - performance.now()));
    } else await sleep(seconds * 1000);
    await traffic.stop();
    run.callerResults = await finished;
    stopSampling();
    run.trafficSeconds = (performance.now() - t0) / 1000;
    for (const e of deployment.engines) {
      const last = await e.probe.sample(false);
      if (last) samples.get(e.name)!.push(toSample(last, Math.round(run.trafficSeconds)));
      const cpu = Math.max(0, (last?.cpuMicros ?? 0) - e.cpuAtStartMicros);
      figures.push({ name: e.name, samples: samples.get(e.name)!, loop: await e.probe.summary(), cpuMicros: e.cpuBeforeMicros + cpu, killedAtSeconds: null });
    }
    if (run.killAt !== null) figures[1]!.killedAtSeconds = Math.round((run.killAt - t0) / 1000);

    // Everything acknowledged arrives (after a kill: once the dead engine's leases ran out).
    const deadline = Date.now() + (killing ? SETTLE_AFTER_KILL_MS : SETTLE_MS);
    if (outstanding(traffic) > 0) progress(`waiting up to ${(deadline - Date.now()) / 1000} s for ${outstanding(traffic)} answers and deliveries still owed`);
    while (Date.now() < deadline && outstanding(traffic) > 0) await sleep(250);
    run.settled = outstanding(traffic) === 0;
    callers.send('close');
    run.dropped = (await callers.next('closed')).dropped;
  } finally {
    stopSampling();
    await traffic?.stop();
    await callers?.stop();
    run.exitCodes = await deployment.stop();
    await peers.close();
  }

  const stored = await readStore(deployment.directUrl, deployment.dataDir, workspaces.map((w) => w.id));
  await deployment.close(opts.keep);
  if (deployment.database === 'pglite' && !opts.keep) rmSync(deployment.dataDir, { recursive: true, force: true });
  const warnings = deployment.engines.flatMap((e) => e.service.warnings);
  const { callerResults, connectErrors, dropped, exitCodes, settled, trafficSeconds } = run;
  const checked = check({ traffic: traffic!, callers: callerResults!, connectErrors, dropped, stored, warnings, exitCodes, settled, killed: killing });
  const takeover = run.killAt === null ? null : takeOver(traffic!, run.killAt);
  const input = {
    database: deployment.database,
    describe: deployment.describe,
    engines: figures,
    callers: callerResults!,
    calls: opts.calls,
    traffic: traffic!,
    trafficSeconds,
    seconds,
    checked,
    takeOver: takeover,
    stored,
  };
  const report = buildReport(input);
  printReport(input, report);

  const folder = opts.record ? fileURLToPath(new URL('../results/', import.meta.url)) : join(work, 'results');
  const name = `soak-${deployment.database}${opts.engines > 1 ? `-${opts.engines}-engines` : ''}.json`;
  const file = writeReport(folder, name, {
    benchmark: 'soak',
    date: conditions.date.toISOString(),
    status: checked.errorCount === 0 ? 'pass' : 'failed',
    deployment: deployment.describe,
    database: deployment.database,
    machine,
    conditions: { loadAverage1m: conditions.loadAverage1m, loadAverage1mAtEnd: runConditions().loadAverage1m, freeMemoryGiB: conditions.freeMemoryGiB },
    parameters: {
      minutes: opts.minutes,
      engines: opts.engines,
      ...LOAD,
      calls: opts.calls,
      sampleMs: SAMPLE_MS,
      gcEverySeconds: (SAMPLE_MS * GC_EVERY) / 1000,
      restartAfterMs: killing ? RESTART_AFTER_MS : null,
    },
    load: report.load,
    perEngine: report.perEngine,
    takeOver: takeover,
    counts: report.counts,
    errors: checked.errors,
    errorLogs: checked.errorLogs.slice(0, 20).map((w) => ({ msg: w.msg, err: (w.err as { message?: string } | undefined)?.message })),
    samples: Object.fromEntries(samples),
  });
  console.log(`\n${checked.errorCount === 0 ? 'PASS' : 'FAILED'}: ${checked.errorCount} errors. Results: ${file}`);
  return checked.errorCount === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof RangeError ? err.message : err);
    process.exit(err instanceof RangeError ? 2 : 1);
  },
);
