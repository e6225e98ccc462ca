/** The admission rules (src/admission/admission.ts), pure: counts and a given clock in, decisions out. */
import { describe, expect, it } from 'vitest';
import { createAdmission, UNBOUNDED, type AdmissionChange, type AdmissionLimits } from '../../src/admission/admission.ts';

const limits: AdmissionLimits = { maxCalls: 10, maxTurnsInFlight: 5, shedLoopDelayMs: 100, shedWindows: 2, shedMinTurnsInFlight: 0, resumeLoopDelayMs: 40, minShedMs: 5_000 };

function setup(overrides: Partial<AdmissionLimits> = {}) {
  let now = 0;
  const changes: AdmissionChange[] = [];
  const admission = createAdmission({ ...limits, ...overrides }, { now: () => now, onChange: (c) => changes.push(c) });
  return { admission, changes, advance: (ms: number) => (now += ms) };
}

describe('new phone calls', () => {
  it('are admitted up to the bound of open calls; the next is refused and counted', () => {
    const { admission } = setup();
    for (let i = 0; i < 10; i++) expect(admission.admitCall()).toBe(true);
    expect(admission.admitCall()).toBe(false);
    expect(admission.state()).toMatchObject({ openCalls: 10, shedding: true, cause: 'open_calls', shed: { call: 1, webchat: 0 } });
  });

  it('calls at their bound refuse calls only: web chat still runs while the loop keeps up', () => {
    const { admission } = setup();
    for (let i = 0; i < 11; i++) admission.admitCall();
    expect(admission.admitWebchat()).toBe(true);
  });

  it('a call that ends frees its place once shedding has lasted its minimum and the calls are below 90 % of the bound', () => {
    const { admission, advance, changes } = setup();
    for (let i = 0; i < 11; i++) admission.admitCall();
    admission.callEnded();
    expect(admission.admitCall()).toBe(false); // minimum shedding time not over
    advance(5_000);
    expect(admission.admitCall()).toBe(false); // 9 open calls: not below 90 % of 10
    admission.callEnded();
    expect(admission.admitCall()).toBe(true);
    expect(changes.map((c) => c.shedding)).toEqual([true, false]);
  });
});

describe('the event loop falling behind', () => {
  it('one slow window is not overload; two in a row start shedding (calls and web chat refused)', () => {
    const { admission, changes } = setup();
    admission.observeLoopDelay(250);
    expect(admission.admitCall()).toBe(true);
    admission.observeLoopDelay(20);
    admission.observeLoopDelay(150);
    expect(admission.state().shedding).toBe(false);
    admission.observeLoopDelay(120);
    expect(changes).toEqual([{ shedding: true, cause: 'loop_delay', at: 0 }]);
    expect(admission.admitCall()).toBe(false);
    expect(admission.admitWebchat()).toBe(false);
    expect(admission.state().shed).toEqual({ call: 1, webchat: 1 });
  });

  it('a slow loop under light traffic (fewer turns in flight than the minimum) is the machine\'s: nothing is refused', () => {
    const { admission } = setup({ shedMinTurnsInFlight: 3, maxTurnsInFlight: 10 });
    admission.turnStarted();
    admission.observeLoopDelay(500);
    admission.observeLoopDelay(500);
    expect(admission.admitWebchat()).toBe(true);
    admission.turnStarted();
    admission.turnStarted();
    admission.observeLoopDelay(500);
    expect(admission.state()).toMatchObject({ shedding: true, cause: 'loop_delay' });
  });

  it('shedding stops only after its minimum time and once the delay is below the resume mark (no flapping)', () => {
    const { admission, advance, changes } = setup();
    admission.observeLoopDelay(200);
    admission.observeLoopDelay(200);
    advance(1_000);
    admission.observeLoopDelay(10);
    expect(admission.state().shedding).toBe(true); // too early
    advance(4_000);
    admission.observeLoopDelay(60);
    expect(admission.state().shedding).toBe(true); // between the marks
    admission.observeLoopDelay(30);
    expect(admission.state().shedding).toBe(false);
    expect(changes.at(-1)).toEqual({ shedding: false, at: 5_000, shedMs: 5_000 });
    expect(admission.admitWebchat()).toBe(true);
  });

  it('calls at their bound widen to every new message when the loop falls behind too', () => {
    const { admission, changes } = setup();
    for (let i = 0; i < 11; i++) admission.admitCall();
    admission.observeLoopDelay(200);
    admission.observeLoopDelay(200);
    expect(admission.state().cause).toBe('loop_delay');
    expect(changes.map((c) => (c.shedding ? c.cause : 'stopped'))).toEqual(['open_calls', 'loop_delay']);
    expect(admission.admitWebchat()).toBe(false);
  });

  it('when the loop catches up but the calls stay at their bound, the cause goes back to open_calls: web chat runs again', () => {
    const { admission, changes } = setup();
    for (let i = 0; i < 11; i++) admission.admitCall();
    admission.observeLoopDelay(200);
    admission.observeLoopDelay(200);
    admission.observeLoopDelay(10);
    expect(changes.map((c) => (c.shedding ? c.cause : 'stopped'))).toEqual(['open_calls', 'loop_delay', 'open_calls']);
    expect(admission.admitWebchat()).toBe(true);
    expect(admission.admitCall()).toBe(false);
  });
});

describe('turns in flight', () => {
  it('at the bound, web chat is refused and new calls too; turns of admitted calls still start (they are only counted)', () => {
    const { admission } = setup({ minShedMs: 0 });
    expect(admission.admitCall()).toBe(true);
    for (let i = 0; i < 5; i++) admission.turnStarted();
    expect(admission.state()).toMatchObject({ shedding: true, cause: 'turns_in_flight', turnsInFlight: 5 });
    expect(admission.admitWebchat()).toBe(false);
    expect(admission.admitCall()).toBe(false);
    admission.turnStarted(); // an admitted call's next prompt: never refused
    expect(admission.state().turnsInFlight).toBe(6);
    for (let i = 0; i < 3; i++) admission.turnEnded();
    expect(admission.admitWebchat()).toBe(true); // 3 in flight: below 80 % of 5
  });
});

describe('an engine on PostgreSQL', () => {
  it('is unbounded: nothing is ever refused', () => {
    const admission = createAdmission(UNBOUNDED, { now: () => 0 });
    for (let i = 0; i < 10_000; i++) {
      admission.admitCall();
      admission.turnStarted();
    }
    admission.observeLoopDelay(10_000);
    expect(admission.admitCall()).toBe(true);
    expect(admission.admitWebchat()).toBe(true);
    expect(admission.state().shed).toEqual({ call: 0, webchat: 0 });
  });
});
