/**
 * A scenario is checked whole before it is kept (docs/scenarios.md, "The file"), and each turn's expectations are
 * checked deterministically against what came back (docs/scenarios.md, "Expectations").
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.ts';
import { checkTurn, type TurnOutcome } from '../../src/scenarios/expectations.ts';
import { junitReport, xmlText } from '../../src/scenarios/junit.ts';
import { elementsNamed, parseXml } from '../helpers/xml.ts';
import { MAX_PATTERN_CHARS } from '../../src/scenarios/limits.ts';
import { checkScenario } from '../../src/scenarios/scenario-check.ts';

const turn = (expect: object) => ({ name: 'Shipping', channel: 'webchat', turns: [{ customer: 'How fast do you ship?', expect }] });

function refusal(body: unknown, options: { model?: boolean } = {}): { code: string; status: number; message: string; details: unknown } {
  try {
    checkScenario(body, options);
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, status: err.status, message: err.message, details: err.details };
    throw err;
  }
  throw new Error('the scenario was accepted');
}

describe('a scenario is checked whole before it is kept', () => {
  it('accepts every expectation, the integrator modes and tool mocks', () => {
    const scenario = {
      name: 'Order status',
      channel: 'phone',
      language: 'en-GB',
      customer: { phone: '+31 6 1111 2222', email: 'sam@example.org', name: 'Sam' },
      integrator: { url: 'https://staging.shop.example/botlink/channel' },
      mocks: { tools: { opening_hours: { saturday: '10-17' } } },
      runs: 3,
      turns: [
        {
          customer: 'Where is order 1001?',
          expect: { contains: ['1001'], not_contains: ['sorry'], matches: 'ship(ped|s)', source: 'ai', handoff: false, tool: { name: 'order_status', args: { order: '1001' } }, max_ms: 3000 },
        },
      ],
    };
    expect(checkScenario(scenario)).toEqual(scenario);
    for (const integrator of ['live', 'none']) expect(checkScenario({ ...scenario, integrator }).integrator).toBe(integrator);
  });

  it('refuses a wrong shape with a 400 naming the field', () => {
    expect(refusal({ name: 'x', channel: 'fax', turns: [{ customer: 'hi' }] })).toMatchObject({ code: 'validation_failed', status: 400, message: expect.stringContaining('channel') });
    expect(refusal({ name: 'x', channel: 'webchat', turns: [] })).toMatchObject({ status: 400, message: expect.stringContaining('turns') });
    expect(refusal(turn({ handoff: 'maybe' }))).toMatchObject({ status: 400, message: expect.stringContaining('turns.0.expect.handoff') });
    expect(refusal(turn({ contain: ['typo'] }))).toMatchObject({ status: 400, details: [{ field: 'turns.0.expect.contain', message: 'is not a known field' }] });
    expect(refusal(turn({ max_ms: 0 }))).toMatchObject({ status: 400 });
    expect(refusal({ ...turn({}), runs: 21 })).toMatchObject({ status: 400, message: expect.stringContaining('runs') });
  });

  it('refuses a pattern that does not compile, is too long, or may take too long, with a 422', () => {
    expect(refusal(turn({ matches: '(unclosed' }))).toMatchObject({
      code: 'unprocessable',
      status: 422,
      message: expect.stringContaining('turns.0.expect.matches is not a valid regular expression'),
      details: [{ field: 'turns.0.expect.matches', message: 'not a valid regular expression' }],
    });
    expect(refusal(turn({ matches: '(a+)+$' }))).toMatchObject({ status: 422, message: expect.stringContaining('may take too long to match') });
    expect(refusal(turn({ matches: 'a'.repeat(MAX_PATTERN_CHARS + 1) }))).toMatchObject({ status: 400, message: expect.stringContaining('turns.0.expect.matches') });
  });

  it('refuses a judge or a persona without a model with a 422 that says why, and takes them with one', () => {
    const judged = { ...turn({}), judge: { criteria: ['Polite'] } };
    expect(refusal(judged, { model: false })).toMatchObject({ status: 422, message: expect.stringContaining('needs a language model'), details: [{ field: 'judge' }] });
    expect(checkScenario(judged, { model: true })).toEqual(judged);
    const persona = { ...turn({}), persona: { goal: 'return shoes' } };
    expect(refusal(persona, { model: false })).toMatchObject({ status: 422, message: expect.stringContaining('needs a language model'), details: [{ field: 'persona', message: 'needs a language model' }] });
    expect(checkScenario(persona, { model: true })).toEqual(persona);
  });

  it('a persona: a goal (not blank), an optional style, max_turns 1 to 20, and its own expectations; turns may then be left out', () => {
    const simulated = (persona: unknown, more: object = {}) => ({ name: 'Simulated', channel: 'whatsapp', persona, ...more });
    const full = simulated({ goal: 'Return a tent', style: 'impatient', max_turns: 20, expect: { goal_reached: false, handoff: 'forward', source: 'ai' } });
    expect(checkScenario(full, { model: true })).toEqual(full);
    expect(checkScenario(simulated({ goal: 'Hi' }, { turns: [{ customer: 'Hello' }] }), { model: true }).turns).toHaveLength(1);
    expect(refusal(simulated({ style: 'brief' }), { model: true })).toMatchObject({ status: 400, details: [{ field: 'persona.goal', message: 'is required' }] });
    expect(refusal(simulated({ goal: '   ' }), { model: true })).toMatchObject({ status: 422, details: [{ field: 'persona.goal', message: 'is blank' }] });
    expect(refusal(simulated({ goal: 'x', max_turns: 21 }), { model: true })).toMatchObject({ status: 400, message: expect.stringContaining('persona.max_turns') });
    expect(refusal(simulated({ goal: 'x', expect: { goal: true } }), { model: true })).toMatchObject({ status: 400, details: [{ field: 'persona.expect.goal', message: 'is not a known field' }] });
    expect(refusal(simulated({ goal: 'x', mood: 'angry' }), { model: true })).toMatchObject({ status: 400, details: [{ field: 'persona.mood', message: 'is not a known field' }] });
    // Neither scripted turns nor a persona: one sentence that names both (a 422: the schema has both optional).
    expect(refusal({ name: 'Empty', channel: 'webchat' }, { model: true })).toMatchObject({ status: 422, message: expect.stringContaining('or a persona'), details: [{ field: 'turns', message: 'is required without a persona' }] });
  });

  it("a judge's criteria: 1 to 10 texts, no other key, none blank or repeated", () => {
    const judged = (judge: unknown) => ({ ...turn({}), judge });
    expect(refusal(judged({ criteria: [] }), { model: true })).toMatchObject({ status: 400, message: expect.stringContaining('judge.criteria') });
    expect(refusal(judged({ criteria: Array.from({ length: 11 }, (_, i) => `Criterion ${i}`) }), { model: true })).toMatchObject({ status: 400 });
    expect(refusal(judged({ criteria: ['x'.repeat(301)] }), { model: true })).toMatchObject({ status: 400, message: expect.stringContaining('judge.criteria.0') });
    expect(refusal(judged({ criteria: ['Polite'], strict: true }), { model: true })).toMatchObject({ status: 400, details: [{ field: 'judge.strict', message: 'is not a known field' }] });
    expect(refusal(judged({}), { model: true })).toMatchObject({ status: 400 });
    expect(refusal(judged({ criteria: ['Polite', ' polite '] }), { model: true })).toMatchObject({ status: 422, details: [{ field: 'judge.criteria.1', message: 'repeats a criterion' }] });
    expect(refusal(judged({ criteria: ['Polite', '   '] }), { model: true })).toMatchObject({ status: 422, details: [{ field: 'judge.criteria.1', message: 'is blank' }] });
  });
});

describe("a turn's expectations", () => {
  const outcome = (o: Partial<TurnOutcome> = {}): TurnOutcome => ({
    reply: 'Order 1001 has SHIPPED; PostNL delivers it tomorrow.',
    source: 'integrator',
    handoff: null,
    tools: [],
    ms: 420,
    ...o,
  });

  it('contains and not_contains ignore capitals; each failure names the text and quotes the reply', () => {
    expect(checkTurn({ contains: ['shipped', 'postnl'], not_contains: ['sorry'] }, outcome())).toEqual([]);
    expect(checkTurn({ contains: ['DHL'], not_contains: ['Tomorrow'] }, outcome())).toEqual([
      { expectation: 'contains "DHL"', got: '"Order 1001 has SHIPPED; PostNL delivers it tomorrow."' },
      { expectation: 'not_contains "Tomorrow"', got: '"Order 1001 has SHIPPED; PostNL delivers it tomorrow."' },
    ]);
  });

  it('a turn without a reply fails what the reply should show, and says why there was none', () => {
    expect(checkTurn({ contains: ['x'] }, outcome({ reply: null, source: null, noReply: 'a person of the team handles the conversation' }))).toEqual([
      { expectation: 'contains "x"', got: 'no reply (a person of the team handles the conversation)' },
    ]);
  });

  it('matches runs the pattern as written (flag u)', () => {
    expect(checkTurn({ matches: 'Order \\d{4}' }, outcome())).toEqual([]);
    expect(checkTurn({ matches: 'shipped' }, outcome())).toEqual([{ expectation: 'matches /shipped/', got: expect.stringContaining('SHIPPED') }]);
    expect(checkTurn({ matches: '(?i:shipped)' }, outcome())).toEqual([]);
  });

  it('source and handoff: true, false, or its kind', () => {
    expect(checkTurn({ source: 'ai' }, outcome())).toEqual([{ expectation: 'source ai', got: 'integrator' }]);
    const forward = outcome({ handoff: { kind: 'forward', connected: false } });
    expect(checkTurn({ handoff: true }, forward)).toEqual([]);
    expect(checkTurn({ handoff: 'forward' }, forward)).toEqual([]);
    expect(checkTurn({ handoff: 'human' }, forward)).toEqual([{ expectation: 'handoff human', got: 'forward' }]);
    expect(checkTurn({ handoff: false }, forward)).toEqual([{ expectation: 'handoff false', got: 'forward' }]);
    expect(checkTurn({ handoff: true }, outcome())).toEqual([{ expectation: 'handoff true', got: 'no handoff' }]);
    expect(checkTurn({ handoff: 'human' }, outcome({ handoff: { kind: 'human', connected: true } }))).toEqual([]);
  });

  it('tool: a call of that name whose arguments deep-equal each key given', () => {
    const called = outcome({ tools: [{ name: 'order_status', args: { order: '1001', postcode: '3511 AB', options: { detail: ['eta'] } }, ok: true }] });
    expect(checkTurn({ tool: { name: 'order_status' } }, called)).toEqual([]);
    expect(checkTurn({ tool: { name: 'order_status', args: { order: '1001', options: { detail: ['eta'] } } } }, called)).toEqual([]);
    expect(checkTurn({ tool: { name: 'order_status', args: { order: 1001 } } }, called)).toEqual([
      { expectation: 'tool order_status {"order":1001}', got: 'order_status {"order":"1001","postcode":"3511 AB","options":{"detail":["eta"]}}' },
    ]);
    expect(checkTurn({ tool: { name: 'product_search' } }, outcome())).toEqual([{ expectation: 'tool product_search', got: 'no tool was called' }]);
  });

  it('max_ms: the reply came within the ceiling', () => {
    expect(checkTurn({ max_ms: 420 }, outcome())).toEqual([]);
    expect(checkTurn({ max_ms: 419 }, outcome())).toEqual([{ expectation: 'max_ms 419', got: '420 ms' }]);
  });
});

describe('the JUnit report', () => {
  it('is XML a strict reader takes, with the names and failures as written', () => {
    const name = 'Bell\u0007 & <tag> "q"';
    const xml = junitReport(
      [
        { name: 'ok', channel: 'webchat', runs: 1, passed: 1, pass_rate: 1, seconds: 0.5, failures: [] },
        { name, channel: 'phone', runs: 2, passed: 1, pass_rate: 0.5, seconds: 1.25, failures: [{ run: 2, turn: 1, expectation: 'contains "<b>"', got: '"a & b"' }] },
      ],
      0.9,
    );
    const suite = parseXml(xml);
    expect(suite.attributes).toMatchObject({ tests: '2', failures: '1', time: '1.750' });
    const [, failed] = elementsNamed(suite, 'testcase');
    expect(failed!.attributes).toMatchObject({ name: 'Bell\uFFFD & <tag> "q"', classname: 'scenarios.phone', time: '1.250' });
    expect(elementsNamed(failed!, 'failure')[0]!.text).toBe('1 of 2 runs passed (pass rate 0.50, below 0.9)\nrun 2, turn 1: expected contains "<b>"; got "a & b"');
  });

  it('the reader refuses what a broken writer would produce', () => {
    for (const broken of ['<a>&</a>', '<a>&nbsp;</a>', '<a><b></a>', '<a x="<"/>', '<a x="1" x="2"/>', '<a/><b/>', '<a>\u0001</a>', '<a>']) {
      expect(() => parseXml(broken), broken).toThrow();
    }
  });
});

describe('JUnit text', () => {
  it('escapes the five special characters and replaces what XML cannot hold', () => {
    expect(xmlText(`<a href="x">Tom & Jerry's</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;');
    expect(xmlText('bell\u0007 nul\u0000 lone\uD800 fine\u{1F600}\ttab')).toBe('bell\uFFFD nul\uFFFD lone\uFFFD fine\u{1F600}\ttab');
  });
});
