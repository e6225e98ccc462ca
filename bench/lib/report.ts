/**
 * Where results go: bench/results/<name>.json and the benchmark's section of docs/performance.md, between
 * `<!-- bench:<name>:start -->` and `<!-- bench:<name>:end -->`. Everything outside the markers is left as written.
 */
import { arch, cpus, freemem, loadavg, release, totalmem, type as osType } from 'node:os';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { BenchmarkResult } from './benchmark.ts';

export interface MachineInfo {
  cpuModel: string;
  cpus: number;
  memoryGiB: number;
  os: string;
  node: string;
  undici: string;
}

export async function machineInfo(): Promise<MachineInfo> {
  const list = cpus();
  const undiciPackage = JSON.parse(
    await readFile(new URL('../../node_modules/undici/package.json', import.meta.url), 'utf8'),
  ) as { version: string };
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cpus: list.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${osType()} ${release()} ${arch()}`,
    node: process.version,
    undici: undiciPackage.version,
  };
}

/**
 * The state of the machine when a benchmark starts. Other work on a small machine moves the figures, so the load
 * average and the free memory are recorded with them.
 */
export interface RunConditions {
  date: Date;
  loadAverage1m: number;
  freeMemoryGiB: number;
}

export function runConditions(): RunConditions {
  return {
    date: new Date(),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
    freeMemoryGiB: Math.round((freemem() / 2 ** 30) * 10) / 10,
  };
}

export async function writeResultFile(
  resultsDir: URL,
  name: string,
  machine: MachineInfo,
  conditions: RunConditions,
  result: BenchmarkResult,
): Promise<URL> {
  await mkdir(resultsDir, { recursive: true });
  const file = new URL(`${name}.json`, resultsDir);
  const json = {
    benchmark: name,
    date: conditions.date.toISOString(),
    status: result.status,
    machine,
    conditions: { loadAverage1m: conditions.loadAverage1m, freeMemoryGiB: conditions.freeMemoryGiB },
    ...result.data,
  };
  await writeFile(file, `${JSON.stringify(json, null, 2)}\n`);
  return file;
}

/** Replace the text between the benchmark's markers; append a new section with markers if the doc has none. */
export async function updateDocSection(doc: URL, name: string, markdown: string): Promise<void> {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  let text: string;
  try {
    text = await readFile(doc, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    text = '# Performance\n';
  }
  const section = `${start}\n${markdown.trim()}\n${end}`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from !== -1 && to > from) {
    text = `${text.slice(0, from)}${section}${text.slice(to + end.length)}`;
  } else {
    text = `${text.trimEnd()}\n\n## ${name}\n\n${section}\n`;
  }
  await writeFile(doc, text);
}

export function machineLine(machine: MachineInfo, conditions: RunConditions): string {
  return (
    `Measured ${conditions.date.toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine.cpus} × ` +
    `${machine.cpuModel}, ${machine.memoryGiB} GiB, ${machine.os}, Node ${machine.node}, undici ` +
    `${machine.undici}; load average ${conditions.loadAverage1m} (1 min) at the start.`
  );
}
