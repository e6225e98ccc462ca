/**
 * The machine a benchmark ran on, and its state when a run starts (the soak records them; the runner, bench/run.ts,
 * records its own per run in bench/lib/summary.ts's RunConditions).
 */
import { arch, cpus, freemem, loadavg, release, totalmem, type as osType } from 'node:os';
import { readFile } from 'node:fs/promises';

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
