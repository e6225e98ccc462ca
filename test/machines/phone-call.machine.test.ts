/**
 * The phone call's lifecycle statechart (machines/phone-call.machine.ts), driven with its actors and actions swapped
 * in and time simulated: what goes out, when admission control stops counting, and when the session ends.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { phoneCallMachine, type CallSetup, type OpenedCall } from '../../machines/phone-call.machine.ts';

const SETUP = { type: 'setup' as const, callSid: 'CA1', relaySessionId: 'VX1', from: '+31612345678', to: '+31201234567' };
const OPENED: OpenedCall = { workspaceId: 'w1', sessionId: 's1', callSid: 'CA1', customerPhone: '+31612345678' };

/** A call whose actors answer as given; `log` records every action the channel would carry out, in order. */
function start(options: { admit?: boolean; open?: () => Promise<OpenedCall | null> } = {}) {
  const log: string[] = [];
  let releaseOpen!: () => void;
  const opening = new Promise<void>((resolve) => (releaseOpen = resolve));
  const note =
    (name: string) =>
    (_: unknown, params?: unknown): void =>
      void log.push(params === undefined ? name : `${name} ${JSON.stringify(params)}`);
  const machine = phoneCallMachine.provide({
    actors: {
      admit: fromPromise(async () => options.admit ?? true),
      openCall: fromPromise<OpenedCall | null, CallSetup>(async () => (options.open ? options.open() : opening.then(() => OPENED))),
      endSession: fromPromise<void, OpenedCall>(async () => {
        log.push('endSession');
      }),
    },
    actions: {
      setupSeen: note('setupSeen'),
      setupTimedOut: note('setupTimedOut'),
      refuse: note('refuse'),
      connected: note('connected'),
      endCall: note('endCall'),
      closeSocket: note('closeSocket'),
      releaseAdmission: note('releaseAdmission'),
      dropFrame: note('dropFrame'),
      logBridgeError: note('logBridgeError'),
      takePrompt: note('takePrompt'),
      takeInterrupt: note('takeInterrupt'),
      takeKey: note('takeKey'),
      logEndFailed: note('logEndFailed'),
    },
    delays: { setupTimeout: 10_000, endGrace: 1_000 },
  });
  const clock = new SimulatedClock();
  const actor = createActor(machine, { clock });
  actor.start();
  return { actor, clock, log, releaseOpen };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('the phone call statechart', () => {
  it('setup, admitted, the session open: talking takes the frames; the socket closing ends the session', async () => {
    const { actor, log, releaseOpen } = start();
    actor.send({ type: 'prompt', text: 'too early', lang: null, last: true });
    actor.send(SETUP);
    await settle();
    expect(actor.getSnapshot().matches({ admitted: 'opening' })).toBe(true);
    expect(actor.getSnapshot().hasTag('settingUp')).toBe(true);
    releaseOpen();
    await settle();
    expect(actor.getSnapshot().matches({ admitted: 'talking' })).toBe(true);
    expect(actor.getSnapshot().hasTag('takesTurns')).toBe(true);
    actor.send({ type: 'prompt', text: 'Where is my order?', lang: 'en-US', last: true });
    actor.send({ type: 'dtmf', digit: '0' });
    actor.send(SETUP);
    actor.send({ type: 'closed' });
    await settle();
    expect(actor.getSnapshot().status).toBe('done');
    expect(log).toEqual([
      'dropFrame {"reason":"before_setup","detail":"prompt before setup"}',
      `setupSeen ${JSON.stringify({ callSid: 'CA1', relaySessionId: 'VX1', from: SETUP.from, to: SETUP.to })}`,
      `connected ${JSON.stringify(OPENED)}`,
      'takePrompt {"text":"Where is my order?","lang":"en-US","last":true}',
      'takeKey {"digit":"0"}',
      'dropFrame {"reason":"duplicate_setup","detail":"a second setup"}',
      'releaseAdmission',
      'endSession',
    ]);
  });

  it('refused by admission control: the busy sentence and our end frame, the socket closed after the grace, nothing counted', async () => {
    const { actor, clock, log } = start({ admit: false });
    actor.send(SETUP);
    await settle();
    expect(actor.getSnapshot().value).toBe('refused');
    actor.send({ type: 'prompt', text: 'hello?', lang: null, last: true });
    clock.increment(1_000);
    actor.send({ type: 'closed' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(log.slice(1)).toEqual(['refuse {"outcome":"busy"}', 'closeSocket {"code":1000,"reason":"call ended"}']);
  });

  it('no workspace answers the number: the sentence and our end frame; admission stops counting when the socket closes', async () => {
    const { actor, log } = start({ open: async () => null });
    actor.send(SETUP);
    await settle();
    expect(actor.getSnapshot().matches({ admitted: 'ending' })).toBe(true);
    actor.send({ type: 'closed' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(log.slice(1)).toEqual(['refuse {"outcome":"unknown_number"}', 'releaseAdmission']);
  });

  it('the session cannot be opened: the apology, our end frame, no session to end', async () => {
    const { actor, log } = start({ open: () => Promise.reject(new Error('database down')) });
    actor.send(SETUP);
    await settle();
    expect(actor.getSnapshot().matches({ admitted: 'ending' })).toBe(true);
    actor.send({ type: 'closed' });
    expect(log.slice(1)).toEqual(['refuse {"outcome":"failed"}', 'releaseAdmission']);
  });

  it('the socket closes while the session opens: admission stops counting at once, the session ends once open', async () => {
    const { actor, log, releaseOpen } = start();
    actor.send(SETUP);
    await settle();
    actor.send({ type: 'closed' });
    expect(log.at(-1)).toBe('releaseAdmission');
    expect(actor.getSnapshot().status).toBe('active');
    releaseOpen();
    await settle();
    expect(actor.getSnapshot().status).toBe('done');
    expect(log.slice(-2)).toEqual([`connected ${JSON.stringify(OPENED)}`, 'endSession']);
  });

  it('a connected handoff hands the call over: our end frame, no more turns, the socket closed after the grace', async () => {
    const { actor, clock, log, releaseOpen } = start();
    actor.send(SETUP);
    releaseOpen();
    await settle();
    actor.send({ type: 'handoff_connected', data: { reason: 'human', session_id: 's1', requested_by: 'dtmf' } });
    expect(actor.getSnapshot().matches({ admitted: 'handingOff' })).toBe(true);
    expect(actor.getSnapshot().hasTag('takesTurns')).toBe(false);
    actor.send({ type: 'prompt', text: 'still there?', lang: null, last: true });
    clock.increment(1_000);
    actor.send({ type: 'closed' });
    await settle();
    expect(log.slice(-4)).toEqual([
      'endCall {"data":{"reason":"human","session_id":"s1","requested_by":"dtmf"}}',
      'closeSocket {"code":1000,"reason":"call ended"}',
      'releaseAdmission',
      'endSession',
    ]);
  });

  it('SIGTERM while talking: the bridge is asked to reconnect, the socket closes with 1001 and the session is kept', async () => {
    const { actor, log, releaseOpen } = start();
    actor.send(SETUP);
    releaseOpen();
    await settle();
    actor.send({ type: 'hand_back' });
    actor.send({ type: 'hand_back' });
    actor.send({ type: 'closed' });
    await settle();
    expect(actor.getSnapshot().status).toBe('done');
    expect(log.slice(-3)).toEqual([
      'endCall {"data":{"reason":"reconnect","session_id":"s1"}}',
      'closeSocket {"code":1001,"reason":"server shutting down"}',
      'releaseAdmission',
    ]);
    expect(log).not.toContain('endSession');
  });

  it('no setup in time: the socket is closed with 1008', () => {
    const { actor, clock, log } = start();
    clock.increment(9_999);
    expect(log).toEqual([]);
    clock.increment(1);
    actor.send({ type: 'closed' });
    expect(log).toEqual(['setupTimedOut', 'closeSocket {"code":1008,"reason":"setup expected"}']);
    expect(actor.getSnapshot().status).toBe('done');
  });
});
