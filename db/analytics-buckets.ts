/**
 * The latency histograms' fixed bucket edges in milliseconds (docs/analytics.md, "How percentiles are read"): bucket 0
 * holds latencies below the first edge, bucket i those from edge i up to the next one, the last bucket everything from
 * the last edge on. Migration 0022 counts into them; src/analytics/buckets.ts reads percentiles back.
 */
export const LATENCY_BUCKET_EDGES_MS = [
  25, 50, 75, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000, 1250, 1500, 2000, 2500, 3000, 3500, 4000, 5000, 6000,
  8000, 10000, 15000, 20000, 30000, 60000,
] as const;
