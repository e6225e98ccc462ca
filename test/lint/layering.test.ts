/**
 * The import graph's floors (docs/architecture.md, "Layout"; `.dependency-cruiser.cjs`): `npm run lint` fails on an
 * import from a lower floor to a higher one, and on a module in a folder no floor holds. Checked here by cruising a
 * small fixture tree with the repository's own rules, so a rule that stops matching is seen.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cruise, type IViolation } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const config = require('../../.dependency-cruiser.cjs') as { forbidden: unknown[]; options: Record<string, unknown> };
const fixture = fileURLToPath(new URL('../fixtures/layering/', import.meta.url));

async function violations(): Promise<IViolation[]> {
  const result = await cruise(['src'], {
    baseDir: fixture,
    tsPreCompilationDeps: true,
    validate: true,
    ruleSet: { forbidden: config.forbidden } as never,
  });
  if (typeof result.output === 'string') throw new Error('dependency-cruiser answered text, not a result');
  return result.output.summary.violations;
}

describe('the floors of the import graph', () => {
  it('fail an import from a lower floor to a higher one, naming the rule', async () => {
    const found = await violations();
    const up = found.filter((v) => v.rule.name.startsWith('no-arrow-up-'));
    expect(up.map((v) => `${v.from} → ${v.to}`)).toEqual(['src/net/reaches-up.ts → src/http/route.ts']);
  });

  it('let an import from a higher floor to a lower one through', async () => {
    const found = await violations();
    expect(found.filter((v) => v.from === 'src/http/route.ts')).toEqual([]);
  });

  it('fail a module in a folder no floor holds', async () => {
    const found = await violations();
    expect(found.filter((v) => v.rule.name === 'on-a-floor').map((v) => v.from)).toEqual(['src/nowhere/unplaced.ts']);
  });
});
