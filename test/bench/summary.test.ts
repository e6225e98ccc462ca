/** The runner's arithmetic over a benchmark's runs (bench/lib/summary.ts): medians, ranges, targets, verdicts. */
import { describe, expect, it } from 'vitest';
import type { Metric, RunResult } from '../../bench/lib/benchmark.ts';
import { summarizeRuns, summaryRows, type RunRecord } from '../../bench/lib/summary.ts';

const conditions = { date: '2026-11-25T14:00:00.000Z', loadAverageStart: [1, 1, 1], loadAverageEnd: [1, 1, 1], freeMemoryGiB: 20 } as const;

function ok(metrics: Metric[], invalid: string[] = [], setup = 'setup'): RunRecord {
  const result: RunResult = { metrics, invalid, setup, parameters: {} };
  return { ok: true, conditions: { ...conditions, loadAverageStart: [1, 1, 1], loadAverageEnd: [1, 1, 1] }, result };
}

const p99 = (value: number): Metric => ({ key: 'p99_ms', label: 'p99', unit: 'ms', value, target: { op: '<=', value: 25 } });

describe('every metric is reported as the median with the min–max over the runs', () => {
  it('takes the middle value of an odd number of runs', () => {
    const summary = summarizeRuns([ok([p99(30)]), ok([p99(10)]), ok([p99(20)])]);
    expect(summary.metrics[0]).toMatchObject({ median: 20, min: 10, max: 30, values: [30, 10, 20] });
  });

  it('takes the mean of the middle two of an even number of runs', () => {
    const summary = summarizeRuns([ok([p99(40)]), ok([p99(10)]), ok([p99(20)]), ok([p99(30)])]);
    expect(summary.metrics[0]).toMatchObject({ median: 25, min: 10, max: 40 });
  });

  it('shows the setup paragraph of the median run', () => {
    const summary = summarizeRuns([ok([p99(30)], [], 'a'), ok([p99(10)], [], 'b'), ok([p99(20)], [], 'c')]);
    expect(summary.medianRun).toBe(3);
  });
});

describe('a target is judged on the median and counted per run', () => {
  it('passes on the median while saying how many runs met it', () => {
    const summary = summarizeRuns([ok([p99(30)]), ok([p99(10)]), ok([p99(20)])]);
    expect(summary.metrics[0]).toMatchObject({ verdict: 'pass', runsMet: 2, runsCounted: 3 });
    expect(summary.status).toBe('pass');
    expect(summaryRows(summary)[0]).toEqual(['p99, ms', '20.00', '10.00–30.00', '≤ 25', 'pass (2/3)']);
  });

  it('misses on the median even if one run met it; a miss alone is not a failure', () => {
    const summary = summarizeRuns([ok([p99(30)]), ok([p99(10)]), ok([p99(26)])]);
    expect(summary.metrics[0]).toMatchObject({ verdict: 'miss', runsMet: 1 });
    expect(summary.status).toBe('miss');
    expect(summaryRows(summary)[0]![4]).toBe('MISS (1/3)');
  });

  it('judges a target naming another metric against that run’s value, and the median against its median', () => {
    const run = (ours: number, peer: number) =>
      ok([
        { key: 'peer_rate', label: 'peer rate', unit: '/s', value: peer },
        { key: 'rate', label: 'rate', unit: '/s', value: ours, target: { op: '>=', metric: 'peer_rate', factor: 0.5 } },
      ]);
    // Per run: 60 ≥ 50 yes, 40 ≥ 30 yes, 45 ≥ 100 no. Medians: 45 ≥ 0.5 × 100 no.
    const summary = summarizeRuns([run(60, 100), run(40, 60), run(45, 200)]);
    const rate = summary.metrics.find((m) => m.key === 'rate')!;
    expect(rate).toMatchObject({ median: 45, verdict: 'miss', runsMet: 2, runsCounted: 3 });
    expect(summaryRows(summary)[1]).toEqual(['rate, /s', '45', '40–60', '≥ 0.5 × peer rate', 'MISS (2/3)']);
  });

  it('a metric without a target has no verdict', () => {
    const summary = summarizeRuns([ok([{ key: 'rss', label: 'RSS', unit: 'MiB', value: 200 }])]);
    expect(summary.metrics[0]!.verdict).toBe('none');
    expect(summaryRows(summary)[0]).toEqual(['RSS, MiB', '200', '', '', '']);
  });
});

describe('a run that is not a valid measurement fails the benchmark', () => {
  it('fails on an invalid sentence in any run, whatever the figures', () => {
    const summary = summarizeRuns([ok([p99(10)]), ok([p99(10)], ['2 prompts unanswered']), ok([p99(10)])]);
    expect(summary.status).toBe('failed');
    expect(summary.invalid).toEqual([{ run: 2, sentence: '2 prompts unanswered' }]);
  });

  it('fails on a run that exited non-zero, and summarises the others', () => {
    const crashed: RunRecord = { ok: false, exitCode: 1, signal: null, stderrTail: 'Error: boom' };
    const summary = summarizeRuns([ok([p99(10)]), crashed, ok([p99(20)])]);
    expect(summary.status).toBe('failed');
    expect(summary.failedRuns).toEqual([{ run: 2, exitCode: 1, signal: null, stderrTail: 'Error: boom' }]);
    expect(summary.metrics[0]).toMatchObject({ median: 15, values: [10, null, 20], runsCounted: 2 });
  });
});

describe('the range is readable with negative values', () => {
  it('writes "to" between bounds when one is negative', () => {
    const added = (value: number): Metric => ({ key: 'added_ms', label: 'added p50', unit: 'ms', value });
    expect(summaryRows(summarizeRuns([ok([added(-0.5)]), ok([added(2)])]))[0]![2]).toBe('-0.50 to 2.00');
  });
});
