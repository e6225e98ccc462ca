/**
 * `npm run cli -- test` as a CI job runs it (docs/scenarios.md, "In CI"): a folder of scenario files against a running
 * service, exit 0 / 1 below --min-pass / 2 on a usage or schema error, `--json` as docs/interfaces.md fixes it, and a
 * JUnit report read back with a strict XML reader.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { describeEachDatabase } from '../helpers/db.ts';
import { elementsNamed, parseXml } from '../helpers/xml.ts';
import { startHarness, type Harness } from '../channels/whatsapp/fixtures/harness.ts';

/** A name with every character XML escapes. */
const AWKWARD = `Tents & <poles> "quoted" 'single'`;

const passing = { name: 'Order status', channel: 'whatsapp', turns: [{ customer: 'Where is order 1001?', expect: { contains: ['answer to'], source: 'integrator' } }] };
const failing = { name: AWKWARD, channel: 'whatsapp', turns: [{ customer: 'Do you sell <tents> & poles?', expect: { contains: ['we sell tents'] } }] };

function folder(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'botlink-scenarios-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), typeof content === 'string' ? content : JSON.stringify(content));
  return dir;
}

describeEachDatabase('npm run cli -- test', (get) => {
  let h: Harness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startHarness(get());
    env = { BOTLINK_URL: h.service.url, BOTLINK_TOKEN: h.workspace.owner };
  });
  afterAll(async () => {
    await h.close();
  });
  const names = async () => ((await h.service.api('GET', '/v1/scenarios', { token: h.workspace.owner })).body.scenarios as { name: string }[]).map((s) => s.name).sort();

  it('exit 0 when every scenario passes; --json and the JUnit report say so', async () => {
    const dir = folder({ 'order.scenario.json': passing, 'notes.txt': 'not a scenario' });
    const junit = join(dir, 'report.xml');
    const run = await runCli(['test', dir, '--json', '--runs', '2', '--junit', junit], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      scenarios: [{ name: 'Order status', runs: 2, passed: 2, pass_rate: 1, failures: [] }],
      pass_rate: 1,
      min_pass: 1,
      passed: true,
    });
    const suite = parseXml(readFileSync(junit, 'utf8'));
    expect(suite).toMatchObject({ name: 'testsuite', attributes: { tests: '1', failures: '0', errors: '0' } });
    expect(elementsNamed(suite, 'testcase').map((c) => c.attributes)).toEqual([expect.objectContaining({ name: 'Order status', classname: 'scenarios.whatsapp' })]);
    expect(elementsNamed(suite, 'failure')).toEqual([]);
  });

  it('exit 1 below --min-pass, with each failure in the JUnit report; scenarios are updated by name, not added again', async () => {
    const dir = folder({ 'a-order.scenario.json': passing, 'b-tents.scenario.json': failing });
    const junit = join(dir, 'report.xml');
    const run = await runCli(['test', dir, '--junit', junit], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('PASS  Order status (whatsapp)  1/1 runs passed');
    expect(run.stdout).toContain(`FAIL  ${AWKWARD} (whatsapp)  0/1 runs passed`);
    expect(run.stdout).toContain('run 1, turn 1: expected contains "we sell tents"; got "Answer to: Do you sell <tents> & poles?"');
    expect(run.stdout).toContain('1 below --min-pass 1.');
    expect(await names()).toEqual(['Order status', AWKWARD].sort());

    const suite = parseXml(readFileSync(junit, 'utf8'));
    expect(suite.attributes).toMatchObject({ tests: '2', failures: '1' });
    const [ok, bad] = elementsNamed(suite, 'testcase');
    expect(ok!.children).toEqual([]);
    // Read back as written: every special character came through the escaping.
    expect(bad!.attributes.name).toBe(AWKWARD);
    const [failure] = elementsNamed(bad!, 'failure');
    expect(failure!.attributes.message).toBe('0 of 1 runs passed (pass rate 0.00, below 1)');
    expect(failure!.text).toContain('run 1, turn 1: expected contains "we sell tents"; got "Answer to: Do you sell <tents> & poles?"');

    // The same suite with a lower bar passes; the scenarios are the same two.
    const lenient = await runCli(['test', dir, '--min-pass', '0', '--json'], env);
    expect(lenient.code).toBe(0);
    expect(JSON.parse(lenient.stdout)).toMatchObject({
      pass_rate: 0.5,
      scenarios: [
        { name: 'Order status', pass_rate: 1 },
        { name: AWKWARD, pass_rate: 0, failures: [{ turn: 1, expectation: 'contains "we sell tents"', got: '"Answer to: Do you sell <tents> & poles?"' }] },
      ],
    });
    expect(await names()).toEqual(['Order status', AWKWARD].sort());
  });

  it('reads YAML scenario files beside JSON ones, as the same scenario', async () => {
    // YAML 1.2: "no" and "on" stay words, so a customer may say them.
    const yaml = [
      'name: Order status in YAML',
      'channel: whatsapp',
      'turns:',
      '  - customer: Where is order 1001?',
      '    expect:',
      '      contains: [answer to]',
      '      source: integrator',
      '  - customer: no',
      '    expect:',
      "      contains: ['to: no']",
      '',
    ].join('\n');
    const run = await runCli(['test', folder({ 'order.scenario.yaml': yaml }), '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ pass_rate: 1, scenarios: [{ name: 'Order status in YAML', runs: 1, passed: 1 }] });
    expect(await names()).toContain('Order status in YAML');
  });

  describe('exit 2 on a usage or schema error, before anything is sent', () => {
    it('a file that is not a valid scenario names the file and the field', async () => {
      const dir = folder({ 'good.scenario.json': { ...passing, name: 'Never saved' }, 'wrong.scenario.json': { ...passing, name: 'Wrong', channel: 'fax' } });
      const run = await runCli(['test', dir], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('wrong.scenario.json: channel must be one of "webchat", "whatsapp", "phone".');
      const pattern = await runCli(['test', join(folder({ 'p.scenario.json': { ...passing, turns: [{ customer: 'Hi', expect: { matches: '(a+)+' } }] } }), 'p.scenario.json')], env);
      expect(pattern.code).toBe(2);
      expect(pattern.stderr).toContain('turns.0.expect.matches may take too long to match');
      expect(await names()).not.toContain('Never saved');
    });

    it('what the service refuses as written (a judge without a model) is a schema error too', async () => {
      const run = await runCli(['test', folder({ 'judged.scenario.json': { ...passing, name: 'Judged', judge: { criteria: ['Polite'] } } })], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('needs a language model');
    });

    it('a missing token, a threshold out of range, YAML, an empty folder', async () => {
      const dir = folder({ 'order.scenario.json': passing });
      const tokenless = await runCli(['test', dir], { BOTLINK_URL: h.service.url, BOTLINK_TOKEN: '' });
      expect(tokenless.code).toBe(2);
      expect(tokenless.stderr).toContain('--token (or BOTLINK_TOKEN) is required');
      const threshold = await runCli(['test', dir, '--min-pass', '1.5'], env);
      expect(threshold.code).toBe(2);
      expect(threshold.stderr).toContain('--min-pass must be a number from 0 to 1');
      const incomplete = await runCli(['test', folder({ 'order.scenario.yaml': 'name: Order' })], env);
      expect(incomplete.code).toBe(2);
      expect(incomplete.stderr).toMatch(/order\.scenario\.yaml: .*channel/);
      // A syntax error names the file, its line and column.
      const broken = await runCli(['test', folder({ 'broken.scenario.yml': 'name: Broken\nturns:\n  - customer: "unclosed\n' })], env);
      expect(broken.code).toBe(2);
      expect(broken.stderr).toMatch(/broken\.scenario\.yml:\d+:\d+: not a YAML file/);
      expect((await runCli(['test', folder({})], env)).code).toBe(2);
      expect(await names()).not.toContain('Broken');
    });
  });

  it('exit 1 when the service refuses the token', async () => {
    const run = await runCli(['test', folder({ 'order.scenario.json': passing })], { ...env, BOTLINK_TOKEN: 'blt_not-a-token' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the service answered HTTP 401');
  });
});
