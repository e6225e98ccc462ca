/**
 * docs/performance.md is generated from bench/performance.template.md and the tracked result files: a hand edit of
 * the doc, or a template or result file changed without `npm run bench:doc`, fails here.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { GENERATED_HEADER, generatePerformanceDoc, renderPerformanceDoc } from '../../bench/lib/performance-doc.ts';
import { summarizeRuns, type ResultFile, type RunRecord } from '../../bench/lib/summary.ts';

const machine = { cpuModel: 'AMD EPYC', cpus: 2, memoryGiB: 24, os: 'Linux x64', node: 'v24.21.0', undici: '8.12.4' };

function runsFile(values: number[], invalid: string[][] = []): ResultFile {
  const runs: RunRecord[] = values.map((value, i) => ({
    ok: true,
    conditions: { date: `2026-11-25T14:0${i}:00.000Z`, loadAverageStart: [1.5, 1, 0.5], loadAverageEnd: [2, 1.25, 0.5], freeMemoryGiB: 20 },
    result: {
      metrics: [{ key: 'p99_ms', label: 'turn overhead p99', unit: 'ms', value, target: { op: '<=', value: 25 } }],
      invalid: invalid[i] ?? [],
      setup: `Setup of run ${i + 1}.`,
      parameters: {},
    },
  }));
  return { format: 'runs-v1', benchmark: 'phone', title: 'Phone', machine, runs, summary: summarizeRuns(runs) };
}

describe('docs/performance.md', () => {
  it('is exactly what `npm run bench:doc` generates from the template and bench/results/*.json', async () => {
    const doc = await readFile(new URL('../../docs/performance.md', import.meta.url), 'utf8');
    expect(doc, 'docs/performance.md was edited by hand or not regenerated: run `npm run bench:doc`').toBe(await generatePerformanceDoc());
    expect(doc.startsWith(GENERATED_HEADER)).toBe(true);
  });
});

describe('a benchmark’s section is rendered from its result file alone', () => {
  const template = '# Perf\n\nProse.\n\n<!-- bench:phone -->\n\nMore prose.\n\n<!-- bench:later -->\n';

  it('shows the median with the min–max, the target, the runs met, the median run’s setup, the runs and the machine', () => {
    const doc = renderPerformanceDoc(template, new Map([['phone', runsFile([30, 10, 20])]]));
    expect(doc).toContain('| turn overhead p99, ms | 20.00 | 10.00–30.00 | ≤ 25 | pass (2/3) |');
    expect(doc).toContain('Setup (run 3, the median run): Setup of run 3.');
    expect(doc).toContain('1. 2026-11-25 14:00 UTC, load average 1.50 / 1.00 / 0.50 at the start, 2.00 / 1.25 / 0.50 at the end');
    expect(doc).toContain('Machine: 2 × AMD EPYC, 24 GiB, Linux x64, Node v24.21.0, undici 8.12.4.');
    expect(doc).toContain('Prose.');
    expect(doc).toContain('More prose.');
  });

  it('says a benchmark with no result file is not measured yet', () => {
    const doc = renderPerformanceDoc(template, new Map([['phone', runsFile([10])]]));
    expect(doc.slice(doc.indexOf('More prose.'))).toContain('*Not measured yet.*');
  });

  it('says first that an invalid run makes the figures no measurement', () => {
    const doc = renderPerformanceDoc(template, new Map([['phone', runsFile([10, 10, 10], [[], ['3 prompts unanswered']])]]));
    expect(doc).toContain('**Invalid: not a valid measurement.** run 2: 3 prompts unanswered.');
    expect(doc.indexOf('**Invalid')).toBeLessThan(doc.indexOf('| turn overhead p99'));
  });

  it('renders a file of the one-run format as that one run, and says it was not re-measured', () => {
    const legacy = {
      benchmark: 'phone',
      date: '2026-11-22T04:11:12.716Z',
      status: 'miss',
      machine,
      conditions: { loadAverage1m: 1.67, freeMemoryGiB: 22.7 },
      parameters: { calls: 1000 },
      results: { overheadMs: { p50: 2.2049, p99: 31.13 }, rounds: [{ a: 1 }, { a: 2 }] },
    };
    const doc = renderPerformanceDoc(template, new Map([['phone', legacy]]));
    expect(doc).toContain('*One run of 2026-11-22 04:11 UTC, before the three-run runner; not re-measured since.*');
    expect(doc).toContain('| `overheadMs.p50` | 2.205 |');
    expect(doc).toContain('| `rounds` | (2 entries, in the file) |');
    expect(doc).toContain('Parameters: calls 1000.');
    expect(doc).toContain('load average 1.67 (1 min) at the start.');
  });
});
