/**
 * The suite's tiers (vitest.config.ts's projects), decided by what a test file does rather than by a list kept by hand,
 * so a new file lands in its tier without an edit. A file's tier is the costliest thing it, or a test helper it imports
 * (followed through test/, harness/ and bench/, never into the product's own src/, db/ or machines/), reaches for:
 *
 * - browser: Chromium (`playwright-core`, test/helpers/browser.ts);
 * - process: child processes (`node:child_process`, `node:worker_threads`; the CLI runner, harness/service-process.ts
 *   and pgbouncer reach it through that import);
 * - service: the whole engine started in-process (test/helpers/service.ts, src/app/service.ts, src/main.ts);
 * - db: a database (test/helpers/db.ts, db/database.ts, PGlite, pg);
 * - unit: none of these.
 *
 * A file can also say its tier itself, on a line of its own: `// tier: process` (for a cost the imports do not show).
 * `npx node test/tiers.ts` prints every file's tier and why.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const TIERS = ['unit', 'db', 'service', 'process', 'browser'] as const;
export type Tier = (typeof TIERS)[number];

const root = fileURLToPath(new URL('../', import.meta.url));

/** What places a file in a tier when it is imported: bare package names, or files relative to the repository. */
const MARKERS: Record<Exclude<Tier, 'unit'>, readonly string[]> = {
  browser: ['playwright-core', 'test/helpers/browser.ts'],
  process: ['node:child_process', 'child_process', 'node:worker_threads', 'worker_threads'],
  service: ['test/helpers/service.ts', 'src/app/service.ts', 'src/main.ts'],
  db: ['test/helpers/db.ts', 'db/database.ts', '@electric-sql/pglite', 'pg'],
};

/** Followed for their own imports: the tests' helpers and harnesses, not the product they exercise. */
const FOLLOWED = ['test/', 'harness/', 'bench/'];

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"]+)['"]/g;
const OWN_MARKER = /^\/\/ tier: (unit|db|service|process|browser)\s*$/m;

export interface Classified {
  tier: Tier;
  /** The import (or the file's own marker) that decided it. */
  because: string;
}

const rank = (tier: Tier) => TIERS.indexOf(tier);

/** The tier of one file (a path relative to the repository), from its imports and theirs. */
export function classify(file: string, seen = new Map<string, Classified>()): Classified {
  const cached = seen.get(file);
  if (cached) return cached;
  // A cycle between helpers: the file in progress counts as unit until it is done.
  seen.set(file, { tier: 'unit', because: 'nothing' });
  let best: Classified = { tier: 'unit', because: 'nothing' };
  const consider = (found: Classified) => {
    if (rank(found.tier) > rank(best.tier)) best = found;
  };
  let text: string;
  try {
    text = readFileSync(join(root, file), 'utf8');
  } catch {
    return best;
  }
  const own = OWN_MARKER.exec(text);
  if (own) consider({ tier: own[1] as Tier, because: `its own "// tier: ${own[1]}"` });
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1]!;
    const target = specifier.startsWith('.') ? relative(root, resolve(root, dirname(file), specifier)) : specifier;
    for (const tier of TIERS) {
      if (tier !== 'unit' && MARKERS[tier].includes(target)) consider({ tier, because: target });
    }
    if (specifier.startsWith('.') && target.endsWith('.ts') && FOLLOWED.some((folder) => target.startsWith(folder))) {
      const through = classify(target, seen);
      // Named by the first helper on the way: "node:child_process via test/helpers/cli.ts".
      if (through.tier !== 'unit') consider({ tier: through.tier, because: through.because.includes(' via ') ? through.because : `${through.because} via ${target}` });
    }
  }
  seen.set(file, best);
  return best;
}

/** Every test file under test/, relative to the repository, sorted. */
export function testFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      // Hidden folders are scratch space (test/tiers.test.ts writes its examples in one), not the suite.
      if (entry.name.startsWith('.')) continue;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'fixtures') walk(path);
      } else if (entry.name.endsWith('.test.ts')) found.push(path);
    }
  };
  walk('test');
  return found.sort();
}

/** The test files of each tier. */
export function filesByTier(): Record<Tier, string[]> {
  const byTier = Object.fromEntries(TIERS.map((t) => [t, [] as string[]])) as Record<Tier, string[]>;
  const seen = new Map<string, Classified>();
  for (const file of testFiles()) byTier[classify(file, seen).tier].push(file);
  return byTier;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const seen = new Map<string, Classified>();
  const files = testFiles();
  for (const file of files) {
    const { tier, because } = classify(file, seen);
    console.log(`${tier.padEnd(8)} ${file}  (${because})`);
  }
  const counts = TIERS.map((t) => `${t} ${files.filter((f) => classify(f, seen).tier === t).length}`);
  console.log(`\n${files.length} files: ${counts.join(', ')}`);
}
