/**
 * The JUnit XML report of a scenario suite (`npm run cli -- test … --junit FILE`, docs/scenarios.md, "In CI"): one
 * testsuite, one testcase per scenario, a failure per scenario whose pass rate is below the threshold, with each
 * expectation that failed and what came back. The common subset CI systems read (Jenkins, GitLab, GitHub's reporters).
 */

export interface SuiteScenario {
  name: string;
  channel: string;
  runs: number;
  passed: number;
  pass_rate: number;
  /** Seconds from the run's start to its end. */
  seconds: number;
  failures: { run: number; turn: number; expectation: string; got: string }[];
}

/**
 * Text for an XML attribute or element: the five special characters escaped, and characters XML 1.0 cannot hold at
 * all (control characters other than tab and line breaks, lone surrogates, U+FFFE and U+FFFF) replaced by U+FFFD.
 */
export function xmlText(value: string): string {
  return value
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

export function junitReport(scenarios: readonly SuiteScenario[], minPass: number): string {
  const failing = scenarios.filter((s) => s.pass_rate < minPass);
  const seconds = scenarios.reduce((sum, s) => sum + s.seconds, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="botlink scenarios" tests="${scenarios.length}" failures="${failing.length}" errors="0" skipped="0" time="${seconds.toFixed(3)}">`,
  ];
  for (const s of scenarios) {
    const open = `  <testcase classname="${xmlText(`scenarios.${s.channel}`)}" name="${xmlText(s.name)}" time="${s.seconds.toFixed(3)}"`;
    if (s.pass_rate >= minPass) {
      lines.push(`${open}/>`);
      continue;
    }
    const message = `${s.passed} of ${s.runs} runs passed (pass rate ${s.pass_rate.toFixed(2)}, below ${minPass})`;
    const details = s.failures.map((f) => `run ${f.run}, turn ${f.turn}: expected ${f.expectation}; got ${f.got}`);
    lines.push(`${open}>`);
    lines.push(`    <failure type="expectation" message="${xmlText(message)}">${xmlText([message, ...details].join('\n'))}</failure>`);
    lines.push('  </testcase>');
  }
  lines.push('</testsuite>', '');
  return lines.join('\n');
}
