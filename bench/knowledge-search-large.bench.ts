/**
 * The knowledge search over 100,000 pages on PostgreSQL, reported with no target: the knowledge-search
 * benchmark with one round of its own, kept apart because syncing 100,000 pages takes minutes per run.
 * KNOWLEDGE_BENCH_ROUNDS overrides the round as it does there.
 */
import { run as runKnowledgeSearch } from './knowledge-search.bench.ts';
import type { RunResult } from './lib/benchmark.ts';

export const name = 'knowledge-search-large';
export const title = 'Knowledge search over 100,000 pages';

export function run(): Promise<RunResult> {
  process.env.KNOWLEDGE_BENCH_ROUNDS ??= 'postgres:100000';
  return runKnowledgeSearch();
}
