/**
 * One run of one benchmark, in a process of its own: `node bench/run-one.ts <name> <out.json>`. It imports the
 * benchmark's module, awaits `run()` and writes `{ conditions, result }` (bench/lib/summary.ts's RunFile) to
 * out.json. bench/run.ts starts it once per run, so no run inherits another's heap, connections or JIT state.
 *
 * Exit code 0 when the file is written (even if the run found itself invalid: that is in the file); 1 when the
 * module could not be loaded, `run()` threw, or it returned something that is not a RunResult.
 */
import { writeFile } from 'node:fs/promises';
import { freemem, loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { Benchmark, RunResult } from './lib/benchmark.ts';
import { discoverBenchmarks } from './lib/discover.ts';
import type { RunConditions, RunFile } from './lib/summary.ts';

function load(): [number, number, number] {
  const [a, b, c] = loadavg().map((v) => Math.round(v * 100) / 100);
  return [a!, b!, c!];
}

/** The fields the runner relies on; anything else about the result is the benchmark's business. */
function checkResult(name: string, result: unknown): RunResult {
  const r = result as Partial<RunResult> | null;
  const problems = [
    ...(Array.isArray(r?.metrics) ? [] : ['`metrics` is not an array']),
    ...(Array.isArray(r?.invalid) ? [] : ['`invalid` is not an array']),
    ...(typeof r?.setup === 'string' ? [] : ['`setup` is not a string']),
    ...(r?.parameters && typeof r.parameters === 'object' ? [] : ['`parameters` is not an object']),
  ];
  for (const m of Array.isArray(r?.metrics) ? r.metrics : []) {
    if (typeof m?.key !== 'string' || typeof m.label !== 'string' || typeof m.unit !== 'string' || typeof m.value !== 'number') {
      problems.push(`metric ${JSON.stringify(m?.key)} lacks a key, label, unit or numeric value`);
    }
  }
  if (problems.length > 0) throw new TypeError(`${name}: run() did not return a RunResult: ${problems.join('; ')}`);
  return r as RunResult;
}

async function main(): Promise<void> {
  const [name, out] = process.argv.slice(2);
  if (!name || !out) throw new TypeError('usage: node bench/run-one.ts <name> <out.json>');
  const found = (await discoverBenchmarks()).find((b) => b.name === name);
  if (!found) throw new TypeError(`no benchmark named ${name}`);
  const module = (await import(pathToFileURL(found.file).href)) as Partial<Benchmark>;
  if (typeof module.run !== 'function') throw new TypeError(`${found.file} exports no run()`);

  const date = new Date().toISOString();
  const loadAverageStart = load();
  const freeMemoryGiB = Math.round((freemem() / 2 ** 30) * 10) / 10;
  const result = checkResult(name, await module.run());
  const conditions: RunConditions = { date, loadAverageStart, loadAverageEnd: load(), freeMemoryGiB };
  await writeFile(out, `${JSON.stringify({ conditions, result } satisfies RunFile, null, 2)}\n`);
}

try {
  await main();
  // A benchmark may leave a handle open (a keep-alive agent, a timer); the run is over once its file is written.
  process.exit(0);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
