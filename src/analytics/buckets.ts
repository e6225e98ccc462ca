/**
 * Percentiles read from the latency histograms (docs/analytics.md, "How percentiles are read"), whose fixed buckets
 * the database counts into (migration 0022's analytics_bucket, edges in db/analytics-buckets.ts).
 */
import { LATENCY_BUCKET_EDGES_MS } from '../../db/analytics-buckets.ts';

export { LATENCY_BUCKET_EDGES_MS };

/** Counts per bucket number (a sparse map: missing buckets are empty). */
export type Histogram = Map<number, number>;

export function addToHistogram(histogram: Histogram, bucket: number, count: number): void {
  histogram.set(bucket, (histogram.get(bucket) ?? 0) + count);
}

/**
 * The latency at percentile `p` (0..1) of a histogram, in whole milliseconds, or null when it is empty: the bucket
 * the p-th value falls in, read linearly within it (the last bucket, open-ended, answers its lower edge).
 */
export function percentile(histogram: Histogram, p: number): number | null {
  let total = 0;
  for (const n of histogram.values()) total += n;
  if (total === 0) return null;
  const rank = p * total;
  let seen = 0;
  const buckets = [...histogram.keys()].sort((a, b) => a - b);
  for (const bucket of buckets) {
    const n = histogram.get(bucket)!;
    if (seen + n >= rank) {
      const low = bucket === 0 ? 0 : LATENCY_BUCKET_EDGES_MS[bucket - 1]!;
      const high = LATENCY_BUCKET_EDGES_MS[bucket];
      if (high === undefined) return low;
      return Math.round(low + ((rank - seen) / n) * (high - low));
    }
    seen += n;
  }
  return LATENCY_BUCKET_EDGES_MS.at(-1)!;
}

/** The bucket a latency falls in, as the database computes it (for tests and the benchmark's checks). */
export function bucketOf(ms: number): number {
  let bucket = 0;
  for (const edge of LATENCY_BUCKET_EDGES_MS) if (ms >= edge) bucket += 1;
  return bucket;
}
