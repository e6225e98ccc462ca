/** The suite's tiers (test/tiers.ts): every test file lands in exactly one, by what it does, and the config runs each. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { classify, filesByTier, testFiles, TIERS } from './tiers.ts';

const root = fileURLToPath(new URL('../', import.meta.url));

describe('the tiers of the suite', () => {
  const byTier = filesByTier();

  it('puts every test file in exactly one tier', () => {
    const all = TIERS.flatMap((t) => byTier[t]);
    expect(all.sort()).toEqual(testFiles());
    expect(new Set(all).size).toBe(all.length);
    for (const tier of TIERS) expect(byTier[tier].length, tier).toBeGreaterThan(0);
  });

  it('classifies by what a file reaches for, through the helpers it imports', () => {
    // Chromium directly; the engine through a WhatsApp harness; child processes through the CLI runner.
    expect(classify('test/e2e/dashboard.test.ts').tier).toBe('browser');
    expect(classify('test/http/operations.test.ts')).toEqual({ tier: 'service', because: 'test/helpers/service.ts via test/channels/whatsapp/fixtures/harness.ts' });
    expect(classify('test/cli/workspace.test.ts')).toEqual({ tier: 'process', because: 'node:child_process via test/helpers/cli.ts' });
    expect(classify('test/db/json.test.ts').tier).toBe('db');
    expect(classify('test/machines/session.machine.test.ts').tier).toBe('unit');
    // A page test that also starts the engine and a database is a browser test: the costliest thing decides.
    expect(byTier.browser).toEqual(expect.arrayContaining(testFiles().filter((f) => f.startsWith('test/e2e/'))));
  });

  describe('a new file', () => {
    const dir = mkdtempSync(join(root, 'test', '.tiers-'));
    const at = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return relative(root, join(dir, name));
    };
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('lands in its tier without an edit: by its imports, or by its own "// tier:" line', () => {
      expect(classify(at('a.test.ts', "import { describeEachDatabase } from '../helpers/db.ts';\n")).tier).toBe('db');
      expect(classify(at('b.test.ts', "import { seedWorkspace } from '../helpers/service.ts';\n")).tier).toBe('service');
      expect(classify(at('c.test.ts', "import { expect } from 'vitest';\n")).tier).toBe('unit');
      expect(classify(at('d.test.ts', "// tier: process\nimport { expect } from 'vitest';\n")).tier).toBe('process');
      // A helper of its own that launches the browser counts too.
      at('helper.ts', "export { launchBrowser } from '../helpers/browser.ts';\n");
      expect(classify(at('e.test.ts', "import { launchBrowser } from './helper.ts';\n")).tier).toBe('browser');
    });
  });
});
