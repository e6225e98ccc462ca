/**
 * Statistics over recorded latencies. Percentiles are computed from every sample (no histogram buckets, no
 * reservoir), by the nearest-rank method: p99 of 10 000 samples is the 9 900th smallest, a value that was observed.
 */

/** Summary of one set of latencies, in milliseconds. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** A growable list of latencies in milliseconds; preallocated so that recording does not allocate per sample. */
export class LatencyRecorder {
  #samples: Float64Array;
  #count = 0;

  constructor(expected = 65_536) {
    this.#samples = new Float64Array(Math.max(16, expected));
  }

  get count(): number {
    return this.#count;
  }

  record(ms: number): void {
    if (this.#count === this.#samples.length) {
      const grown = new Float64Array(this.#samples.length * 2);
      grown.set(this.#samples);
      this.#samples = grown;
    }
    this.#samples[this.#count++] = ms;
  }

  /** The samples recorded so far, as a view (no copy). */
  values(): Float64Array {
    return this.#samples.subarray(0, this.#count);
  }
}

/** Nearest-rank percentile of samples sorted ascending; `p` in 0..100. NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** Summary of one or more sets of samples pooled together. */
export function summarize(...sets: ArrayLike<number>[]): LatencySummary {
  const total = sets.reduce((n, s) => n + s.length, 0);
  const pooled = new Float64Array(total);
  let offset = 0;
  for (const set of sets) {
    pooled.set(set, offset);
    offset += set.length;
  }
  pooled.sort();
  let sum = 0;
  for (const v of pooled) sum += v;
  return {
    count: total,
    mean: total === 0 ? Number.NaN : sum / total,
    p50: percentile(pooled, 50),
    p90: percentile(pooled, 90),
    p99: percentile(pooled, 99),
    max: total === 0 ? Number.NaN : pooled[total - 1]!,
  };
}

/** The median of a few values (for an even count, the mean of the middle two). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A number rounded to `digits` decimals, for JSON and tables (keeps the files readable). */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
