/**
 * Finds the benchmarks without running or importing them: each `*.bench.ts` in the folder is read as text for its
 * `export const name = '…'` and `export const title = '…'`. Importing a module would load everything it imports
 * (the service, the database) into the runner's own process, whose figures must not matter.
 *
 * A module without a `title` still has the older shape (`run()` returns the old one-run result): the
 * runner lists it as not converted yet and skips it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface FoundBenchmark {
  name: string;
  /** Null for a module still in the older format. */
  title: string | null;
  /** Absolute path of the module. */
  file: string;
}

/** The folder benchmarks are found in: BENCH_DIR (tests point it at fixtures), else bench/. */
export function benchDir(): string {
  return process.env.BENCH_DIR ?? fileURLToPath(new URL('../', import.meta.url));
}

function exportedString(source: string, name: string): string | null {
  const match = new RegExp(`export const ${name}\\s*=\\s*(['"\`])((?:(?!\\1)[^\\\\]|\\\\.)*)\\1`).exec(source);
  return match ? match[2]!.replace(/\\(.)/g, '$1') : null;
}

export async function discoverBenchmarks(dir = benchDir()): Promise<FoundBenchmark[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.bench.ts')).sort();
  const found: FoundBenchmark[] = [];
  for (const file of files) {
    const source = await readFile(join(dir, file), 'utf8');
    const name = exportedString(source, 'name');
    if (name === null) throw new TypeError(`${join(dir, file)} must export \`name\` as a string literal`);
    found.push({ name, title: exportedString(source, 'title'), file: join(dir, file) });
  }
  return found;
}
