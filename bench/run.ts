/**
 * `npm run bench`: runs every benchmark in bench/ (each `*.bench.ts` exports `name` and `run()`), one after the
 * other, prints its table, writes bench/results/<name>.json and regenerates its section of docs/performance.md.
 *
 * `npm run bench -- botlink-client` runs only the benchmarks named. The exit code is 0 when a target is missed (a
 * benchmark is a measurement, not a test); it is 1 only when a benchmark could not run or its requests failed (then
 * there is no valid measurement).
 */
import { readdir } from 'node:fs/promises';
import type { LegacyBenchmark as Benchmark, BenchmarkResult } from './lib/benchmark.ts';
import { machineInfo, machineLine, runConditions, updateDocSection, writeResultFile } from './lib/report.ts';

const benchDir = new URL('./', import.meta.url);
const resultsDir = new URL('./results/', import.meta.url);
const performanceDoc = new URL('../docs/performance.md', import.meta.url);

async function discover(): Promise<Benchmark[]> {
  const files = (await readdir(benchDir)).filter((f) => f.endsWith('.bench.ts')).sort();
  const found: Benchmark[] = [];
  for (const file of files) {
    const module = (await import(new URL(file, benchDir).href)) as Partial<Benchmark>;
    if (typeof module.name !== 'string' || typeof module.run !== 'function') {
      throw new TypeError(`bench/${file} must export \`name\` (a string) and \`run()\``);
    }
    found.push({ name: module.name, run: module.run });
  }
  return found;
}

async function main(): Promise<number> {
  const wanted = process.argv.slice(2);
  const all = await discover();
  const unknown = wanted.filter((w) => !all.some((b) => b.name === w));
  if (unknown.length > 0) {
    console.error(`Unknown benchmark ${unknown.join(', ')}; there are: ${all.map((b) => b.name).join(', ')}.`);
    return 1;
  }
  const selected = wanted.length === 0 ? all : all.filter((b) => wanted.includes(b.name));
  const machine = await machineInfo();
  console.log(`Benchmarks on ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}\n`);

  const outcomes: { name: string; status: BenchmarkResult['status'] | 'error' }[] = [];
  for (const benchmark of selected) {
    console.log(`== ${benchmark.name}`);
    const conditions = runConditions();
    let result: BenchmarkResult;
    try {
      result = await benchmark.run();
    } catch (err) {
      console.error(`${benchmark.name} could not run:`, err);
      outcomes.push({ name: benchmark.name, status: 'error' });
      continue;
    }
    console.log(`\n${result.table}\n`);
    const file = await writeResultFile(resultsDir, benchmark.name, machine, conditions, result);
    await updateDocSection(performanceDoc, benchmark.name, `${result.markdown}\n\n${machineLine(machine, conditions)}`);
    console.log(`Wrote ${file.pathname} and docs/performance.md\n`);
    outcomes.push({ name: benchmark.name, status: result.status });
  }

  console.log('Summary:');
  for (const { name, status } of outcomes) {
    const label = { pass: 'targets met', miss: 'TARGET MISSED', failed: 'FAILED (requests failed)', error: 'ERROR' };
    console.log(`  ${name}: ${label[status]}`);
  }
  return outcomes.some((o) => o.status === 'error' || o.status === 'failed') ? 1 : 0;
}

process.exitCode = await main();
