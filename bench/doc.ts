/**
 * `npm run bench:doc`: rewrites docs/performance.md from bench/performance.template.md and the tracked result files
 * (bench/results/<name>.json), without running anything.
 */
import { defaultPaths, writePerformanceDoc } from './lib/performance-doc.ts';

const paths = defaultPaths();
await writePerformanceDoc(paths);
console.log(`Wrote ${paths.doc}`);
