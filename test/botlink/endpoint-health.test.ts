import { describe, expect, it } from 'vitest';
import {
  answerP99,
  applyOutcomes,
  DOWN_AFTER_FAILURES,
  FAILURE_STREAK_MS,
  healthOutcomeOf,
  HEALTHY_AFTER_RESPONSES,
  initialHealth,
  outcomeMix,
  RECOVERED_AFTER_RESPONSES,
  waitBudget,
  type HealthOutcome,
  type HealthOutcomeKind,
} from '../../src/botlink/endpoint-health.ts';

const URL = 'https://shop.example/botlink/channel';
const T0 = 1_700_000_000_000;

/** Outcomes five seconds apart (each request sent after the previous outcome), starting at T0 + offset. */
const STEP = 5_000;
function outcomes(kinds: HealthOutcomeKind[], latencyMs = 200, offset = 0): HealthOutcome[] {
  return kinds.map((kind, i) => ({ at: T0 + offset + i * STEP, kind, latencyMs }));
}

const repeat = <T,>(n: number, x: T): T[] => Array.from({ length: n }, () => x);

describe('endpoint health: the breaker over channel request outcomes', () => {
  it('a new endpoint is healthy and turns wait the full deadline', () => {
    expect(waitBudget(initialHealth(URL, T0), 3500)).toEqual({ decision: 'wait', waitMs: 3500 });
  });

  it('one failure makes it degraded; three in a row take it down, and a down endpoint is not waited for', () => {
    const one = applyOutcomes(initialHealth(URL, T0), outcomes(['answer', 'timeout']));
    expect(one.health.state).toBe('degraded');
    const down = applyOutcomes(one.health, outcomes(repeat(DOWN_AFTER_FAILURES - 1, 'timeout' as const), 3500, 2 * STEP));
    expect(down.health.state).toBe('down');
    expect(down.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['degraded>down']);
    expect(waitBudget(down.health, 3500)).toEqual({ decision: 'not_waited', waitMs: 0 });
  });

  it('connection failures and 5xx count like timeouts; invalid answers and 4xx do not', () => {
    expect(applyOutcomes(initialHealth(URL, T0), outcomes(['connection', 'status_5xx', 'connection'])).health.state).toBe('down');
    expect(applyOutcomes(initialHealth(URL, T0), outcomes(['invalid', 'invalid', 'invalid', 'invalid'])).health.state).toBe('healthy');
    expect(healthOutcomeOf('status', 503)).toBe('status_5xx');
    expect(healthOutcomeOf('status', 404)).toBe('invalid');
    expect(healthOutcomeOf('tls', null)).toBe('connection');
    expect(healthOutcomeOf('invalid_json', 200)).toBe('invalid');
    expect(healthOutcomeOf('aborted', null)).toBeNull();
  });

  it('failures far apart never add up to down', () => {
    const spaced = [0, 1, 2, 3].map((i) => ({ at: T0 + i * (FAILURE_STREAK_MS + 1), kind: 'timeout' as const, latencyMs: 3500 }));
    const result = applyOutcomes(initialHealth(URL, T0), spaced);
    expect(result.health.state).toBe('degraded');
    expect(result.health.consecutiveFailures).toBe(1);
  });

  it('a response after down starts probing; three responses make it healthy; a failure while probing is down again', () => {
    const down = applyOutcomes(initialHealth(URL, T0), outcomes(['timeout', 'timeout', 'timeout'], 3500)).health;
    const probing = applyOutcomes(down, outcomes(['answer'], 300, 20_000));
    expect(probing.health.state).toBe('probing');
    const again = applyOutcomes(probing.health, outcomes(['timeout'], 3500, 30_000));
    expect(again.health.state).toBe('down');
    const recovered = applyOutcomes(again.health, outcomes(repeat(RECOVERED_AFTER_RESPONSES, 'answer' as const), 300, 40_000));
    expect(recovered.health.state).toBe('healthy');
    expect(recovered.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['down>probing', 'probing>healthy']);
    expect(recovered.health.since).toBe(T0 + 40_000 + (RECOVERED_AFTER_RESPONSES - 1) * STEP);
  });

  it('a degraded endpoint is healthy again after a run of responses', () => {
    const degraded = applyOutcomes(initialHealth(URL, T0), outcomes(['timeout'])).health;
    expect(applyOutcomes(degraded, outcomes(repeat(HEALTHY_AFTER_RESPONSES - 1, 'answer' as const), 200, STEP)).health.state).toBe('degraded');
    expect(applyOutcomes(degraded, outcomes(repeat(HEALTHY_AFTER_RESPONSES, 'answer' as const), 200, STEP)).health.state).toBe('healthy');
  });

  it('every state but down waits the whole deadline, whatever the endpoint’s own answer times', () => {
    // A fast endpoint (200 ms) and a slow one (2.5 s), each after one timeout: degraded, and still waited in full.
    for (const latency of [200, 2500]) {
      const degraded = applyOutcomes(initialHealth(URL, T0), [...outcomes(repeat(10, 'answer' as const), latency), ...outcomes(['timeout'], 3500, 10 * STEP)]).health;
      expect(degraded.state).toBe('degraded');
      expect(answerP99(degraded, T0 + 11 * STEP)).toBe(latency);
      expect(waitBudget(degraded, 3500)).toEqual({ decision: 'wait', waitMs: 3500 });
      expect(waitBudget(degraded, 6000)).toEqual({ decision: 'wait', waitMs: 6000 });
    }
    const down = applyOutcomes(initialHealth(URL, T0), outcomes(['timeout', 'timeout', 'timeout'], 3500)).health;
    expect(waitBudget(down, 3500)).toEqual({ decision: 'not_waited', waitMs: 0 });
    const probing = applyOutcomes(down, outcomes(['answer'], 50, 20_000)).health;
    expect(probing.state).toBe('probing');
    expect(waitBudget(probing, 3500)).toEqual({ decision: 'wait', waitMs: 3500 });
    expect(waitBudget(initialHealth(URL, T0), 6000)).toEqual({ decision: 'wait', waitMs: 6000 });
  });

  it('the error mix counts the recent outcomes by kind, every kind named', () => {
    const h = applyOutcomes(initialHealth(URL, T0), outcomes(['answer', 'answer', 'timeout', 'status_5xx', 'invalid'])).health;
    expect(outcomeMix(h, T0 + 5 * STEP)).toEqual({ answer: 2, invalid: 1, timeout: 1, connection: 0, status_5xx: 1 });
    // Ten minutes later the window is empty.
    expect(outcomeMix(h, T0 + 11 * 60_000)).toEqual({ answer: 0, invalid: 0, timeout: 0, connection: 0, status_5xx: 0 });
  });

  it('a timeout of a request sent before the endpoint was last seen answering changes nothing (the end of an outage)', () => {
    const down = applyOutcomes(initialHealth(URL, T0), outcomes(['timeout', 'timeout', 'timeout'], 3500)).health;
    // The endpoint answers again at +20 s; requests sent at +19 s (during the outage) time out at +22.5 s.
    const answered = applyOutcomes(down, [{ at: T0 + 20_000, kind: 'answer', latencyMs: 50 }]).health;
    expect(answered.state).toBe('probing');
    const late = applyOutcomes(answered, [
      { at: T0 + 22_500, kind: 'timeout', latencyMs: 3_500 },
      { at: T0 + 22_510, kind: 'timeout', latencyMs: 3_500 },
      { at: T0 + 22_520, kind: 'timeout', latencyMs: 3_500 },
    ]);
    expect(late.transitions).toEqual([]);
    expect(late.health).toMatchObject({ state: 'probing', consecutiveResponses: 1 });
    expect(outcomeMix(late.health, T0 + 23_000).timeout).toBe(6);
    // A timeout of a request sent after that answer still counts.
    const fresh = applyOutcomes(late.health, [{ at: T0 + 26_000, kind: 'timeout', latencyMs: 3_500 }]);
    expect(fresh.health.state).toBe('down');
  });
});
