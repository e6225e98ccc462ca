/**
 * The delivery actor of one endpoint with its I/O (the claim and the deliveries port) swapped for fakes (machine.provide): concurrency, refills, the
 * verdicts it hands to `record`, what a disabled endpoint and a stop do, and claim errors on a simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { createActor, fromCallback, fromPromise, SimulatedClock, waitFor } from 'xstate';
import type { ClaimedDelivery, ClaimInput, DeliveryCommand, DeliveryReport, RecordInput, RecordOutput, SendOutput } from '../../machines/webhook-delivery-types.ts';
import { webhookDeliveryMachine } from '../../machines/webhook-delivery.machine.ts';
import { CLAIM_RETRY_MS } from '../../src/webhooks/limits.ts';
import { decideAttempt, type AttemptResult } from '../../src/webhooks/retry-policy.ts';

const policy = { decide: decideAttempt, claimRetryMs: CLAIM_RETRY_MS };

const T0 = 1_700_000_000_000;

function delivery(n: number, extra: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: `d${n}`,
    eventId: `msg_${n}`,
    kind: 'event',
    attemptCount: 0,
    endpointId: 'e1',
    event: 'new_chat',
    url: 'https://hooks.example/x',
    payload: { event: 'new_chat' },
    eventCreatedAt: T0,
    secretSealed: 'sealed',
    previousSecretSealed: null,
    previousSecretExpiresAt: null,
    ...extra,
  };
}

const deferred = <T,>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

function harness(opts: {
  pool: ClaimedDelivery[];
  send?: (d: ClaimedDelivery) => Promise<AttemptResult>;
  record?: (input: RecordInput) => Promise<Partial<RecordOutput>>;
  claim?: (input: ClaimInput) => Promise<ClaimedDelivery[]>;
  /** Report every answer (and written outcome) of one command in one event, as the worker's port does; else one each. */
  together?: boolean;
}) {
  const pool = [...opts.pool];
  const calls = { claims: [] as ClaimInput[], sends: [] as string[], records: [] as RecordInput[], maxInFlight: 0 };
  let inFlight = 0;
  const send = async (input: ClaimedDelivery): Promise<SendOutput> => {
    calls.sends.push(input.id);
    inFlight++;
    calls.maxInFlight = Math.max(calls.maxInFlight, inFlight);
    try {
      const result = await (opts.send ?? (async () => ({ kind: 'response', status: 200, retryAfter: null }) as AttemptResult))(input);
      return { deliveryId: input.id, attemptedAt: T0, latencyMs: 5, result, responseExcerpt: '', jitterSample: 0.5 };
    } finally {
      inFlight--;
    }
  };
  const record = async (input: RecordInput): Promise<RecordOutput> => {
    calls.records.push(input);
    const extra = opts.record ? await opts.record(input) : {};
    return { deliveryId: input.delivery.id, recorded: true, endpointDisabled: null, ...extra };
  };
  const machine = webhookDeliveryMachine.provide({
    actors: {
      claim: fromPromise<ClaimedDelivery[], ClaimInput>(async ({ input }) => {
        calls.claims.push(input);
        if (opts.claim) return opts.claim(input);
        return pool.splice(0, input.limit);
      }),
      deliveries: fromCallback<DeliveryCommand, { endpointId: string }, DeliveryReport>(({ sendBack, receive }) => {
        receive((command) => {
          if (opts.together && command.type === 'send') {
            // The worker's port: the answers of one step reported in one event.
            void Promise.all(command.deliveries.map((d) => send(d))).then((outputs) => sendBack({ type: 'sent', outputs }));
          } else if (opts.together && command.type === 'record') {
            void Promise.all(command.inputs.map((input) => record(input))).then((outputs) => sendBack({ type: 'recorded', outputs }));
          } else if (command.type === 'send') {
            for (const d of command.deliveries) {
              send(d).then((output) => sendBack({ type: 'sent', outputs: [output] }), (error: unknown) => sendBack({ type: 'sendFailed', deliveryId: d.id, error }));
            }
          } else {
            for (const input of command.inputs) {
              const id = input.delivery.id;
              record(input).then((output) => sendBack({ type: 'recorded', outputs: [output] }), (error: unknown) => sendBack({ type: 'recordFailed', deliveryId: id, error }));
            }
          }
        });
      }),
    },
  });
  return { machine, calls, pool };
}

describe('the delivery actor of one endpoint', () => {
  it('keeps at most `concurrency` attempts in flight and delivers the whole backlog', async () => {
    const { machine, calls } = harness({
      pool: Array.from({ length: 25 }, (_, i) => delivery(i)),
      send: async () => {
        await new Promise((r) => setTimeout(r, 2));
        return { kind: 'response', status: 204, retryAfter: null };
      },
    });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 4 } });
    const errors: unknown[] = [];
    actor.subscribe({ error: (err) => errors.push(err) });
    actor.start();
    await waitFor(actor, (s) => s.status === 'done', { timeout: 5_000 });
    expect(errors).toEqual([]);
    expect(calls.records.map((r) => r.delivery.id).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `d${i}`).sort());
    expect(calls.records.every((r) => r.verdict.outcome === 'succeeded')).toBe(true);
    expect(calls.maxInFlight).toBe(4);
    // Claims run ahead by another `concurrency`, and wait for that much room: fewer claims than deliveries.
    for (const c of calls.claims) expect(c.limit).toBeLessThanOrEqual(8);
    expect(calls.claims[0]!.limit).toBe(8);
    expect(calls.claims.length).toBeLessThan(25 / 4);
  });

  it('settles every delivery of a report that carries several answers, and each once', async () => {
    const { machine, calls } = harness({ pool: Array.from({ length: 30 }, (_, i) => delivery(i)), together: true });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 4, claimAhead: 8 } }).start();
    await waitFor(actor, (s) => s.status === 'done', { timeout: 5_000 });
    expect(calls.records.map((r) => r.delivery.id).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `d${i}`).sort());
    expect(new Set(calls.sends).size).toBe(30);
    expect(calls.sends).toHaveLength(30);
    expect(calls.maxInFlight).toBe(4);
    expect(actor.getSnapshot().context.recording).toEqual([]);
  });

  it('claims nothing more while as many outcomes as its capacity wait to be written, and goes on once they are', async () => {
    const gate = deferred<void>();
    const { machine, calls } = harness({ pool: Array.from({ length: 40 }, (_, i) => delivery(i)), record: async () => (await gate.promise, {}) });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 4, claimAhead: 4 } }).start();
    await waitFor(actor, (s) => s.context.recording.length >= 8, { timeout: 5_000 });
    await new Promise((r) => setTimeout(r, 50));
    // Capacity 8 (4 slots + 4 ahead): once 8 answers wait for their write, nothing more is claimed or sent.
    const claims = calls.claims.length;
    const sends = calls.sends.length;
    await new Promise((r) => setTimeout(r, 50));
    expect(calls.claims).toHaveLength(claims);
    expect(calls.sends).toHaveLength(sends);
    expect(sends).toBeLessThanOrEqual(16); // at most the unwritten bound plus what was held when it was reached
    gate.resolve();
    await waitFor(actor, (s) => s.status === 'done', { timeout: 5_000 });
    expect(new Set(calls.sends).size).toBe(40);
  });

  it('claims up to `claimAhead` beyond the slots when asked to run further ahead', async () => {
    const { machine, calls } = harness({ pool: Array.from({ length: 40 }, (_, i) => delivery(i)) });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 4, claimAhead: 12 } }).start();
    await waitFor(actor, (s) => s.status === 'done', { timeout: 5_000 });
    expect(calls.records).toHaveLength(40);
    expect(calls.maxInFlight).toBeLessThanOrEqual(4);
    expect(calls.claims[0]!.limit).toBe(16);
    for (const c of calls.claims) expect(c.limit).toBeLessThanOrEqual(16);
  });

  it('hands `record` the verdict of the retry policy: the next attempt 5 s after a first failure', async () => {
    const { machine, calls } = harness({ pool: [delivery(1)], send: async () => ({ kind: 'response', status: 500, retryAfter: null }) });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 2 } }).start();
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.records[0]!.verdict).toEqual({ outcome: 'retry', delayMs: 5_000, nextAttemptAt: T0 + 5_000 });
  });

  it('counts attempts made before: the eighth failure is the last', async () => {
    const { machine, calls } = harness({ pool: [delivery(1, { attemptCount: 7 })], send: async () => ({ kind: 'error', reason: 'timeout', message: 'late' }) });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 2 } }).start();
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.records[0]!.verdict).toEqual({ outcome: 'exhausted' });
  });

  it('claims nothing more once an outcome disabled the endpoint, and ends with the reason', async () => {
    const goneRecorded = deferred<void>();
    const { machine, calls, pool } = harness({
      pool: Array.from({ length: 10 }, (_, i) => delivery(i)),
      send: async (d) => {
        if (d.id !== 'd0') await goneRecorded.promise;
        return { kind: 'response', status: d.id === 'd0' ? 410 : 200, retryAfter: null };
      },
      record: async (input) => {
        if (input.verdict.outcome !== 'gone') return {};
        setTimeout(() => goneRecorded.resolve(), 0);
        return { endpointDisabled: 'The receiver answered 410 Gone.' };
      },
    });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 1 } }).start();
    await waitFor(actor, (s) => s.status === 'done');
    // d1 had its slot (and d2 was claimed ahead) before d0's outcome was written; once it was, nothing more is
    // sent or claimed, and what is still queued goes back to the worker as unsent.
    expect(calls.records.map((r) => r.verdict.outcome)).toEqual(['gone', 'succeeded']);
    expect(calls.sends).toEqual(['d0', 'd1']);
    expect(calls.claims).toHaveLength(2);
    expect(pool).toHaveLength(7);
    expect(actor.getSnapshot().output).toEqual({ disabledReason: 'The receiver answered 410 Gone.', lastError: null, unsent: ['d2'] });
  });

  it('claims again when woken during a claim that came back short', async () => {
    const gate = deferred<ClaimedDelivery[]>();
    let claims = 0;
    const { machine, calls } = harness({
      pool: [],
      claim: async () => (++claims === 1 ? gate.promise : claims === 2 ? [delivery(9)] : []),
    });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 4 } }).start();
    actor.send({ type: 'wake' });
    gate.resolve([]);
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.records.map((r) => r.delivery.id)).toEqual(['d9']);
    // The second claim came back short with no wake-up since: nothing more is due.
    expect(claims).toBe(2);
  });

  it('on stop finishes the attempts in flight, sends and claims no more', async () => {
    const release = deferred<void>();
    const { machine, calls, pool } = harness({
      pool: Array.from({ length: 6 }, (_, i) => delivery(i)),
      send: async () => {
        await release.promise;
        return { kind: 'response', status: 200, retryAfter: null };
      },
    });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 2 } }).start();
    await waitFor(actor, () => calls.sends.length === 2);
    actor.send({ type: 'stop' });
    release.resolve();
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.records).toHaveLength(2);
    expect(calls.claims).toHaveLength(1);
    expect(pool).toHaveLength(2);
    // The two claimed ahead were never sent: the worker hands their leases back.
    expect(actor.getSnapshot().output?.unsent).toEqual(['d2', 'd3']);
  });

  it('waits CLAIM_RETRY_MS after a failed claim, then claims again', async () => {
    const clock = new SimulatedClock();
    let claims = 0;
    const { machine, calls } = harness({
      pool: [],
      claim: async () => {
        claims++;
        if (claims === 1) throw new Error('connection refused');
        return claims === 2 ? [delivery(1)] : [];
      },
    });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 2 }, clock }).start();
    await waitFor(actor, (s) => s.matches('cooling'));
    expect(actor.getSnapshot().context.lastError).toContain('connection refused');
    clock.increment(CLAIM_RETRY_MS - 1);
    expect(actor.getSnapshot().matches('cooling')).toBe(true);
    clock.increment(1);
    await waitFor(actor, (s) => s.status === 'done');
    expect(calls.records.map((r) => r.delivery.id)).toEqual(['d1']);
  });

  it('leaves a delivery whose outcome could not be written to its lease, and says so', async () => {
    const { machine } = harness({ pool: [delivery(1)], record: async () => Promise.reject(new Error('database away')) });
    const actor = createActor(machine, { input: { policy, endpointId: 'e1', concurrency: 2 } }).start();
    await waitFor(actor, (s) => s.status === 'done');
    expect(actor.getSnapshot().output?.lastError).toContain('database away');
  });
});
