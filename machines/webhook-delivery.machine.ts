/**
 * The delivery actor of one webhook endpoint. Pure statechart: claiming deliveries from the table, and
 * sending attempts and writing their outcomes, are named actors that the delivery worker provides
 * (src/webhooks/delivery-worker.ts); the decision in between (success, retry when, give up, endpoint gone) is made
 * here with the pure retry policy.
 *
 *   claiming ──claimed──▶ running ──(room in the queue, more due)──▶ claiming
 *      │                     │
 *      └─error─▶ cooling ────┘     running ──(nothing queued, sent or being written; nothing due | stopping)──▶ done
 *
 *   every claimed delivery:  queued ─(a slot is free)─▶ send ─▶ decide (retry policy) ─▶ record
 *
 * `claim` is a promise actor per claim. `deliveries` is the endpoint's I/O port, one callback actor for the actor's
 * whole life: the machine sends it `send` and `record` commands and it reports `sent` and `recorded` back, each
 * carrying every delivery of one step (the port gathers what comes in during one turn of the event loop into one
 * report). (A child actor per request would cost a copy of the children map at every spawn and stop, and an event per
 * delivery a macrostep each; at thousands of deliveries a second either dominated the worker's CPU.) Stopping this actor stops the port, which aborts the requests in flight.
 *
 * `concurrency` bounds the requests in flight to the receiver: a slot is taken by `send` and freed when the answer is
 * in. Claims run ahead by up to `claimAhead` more deliveries, so a freed slot is refilled without waiting for the
 * database, and outcomes are written while the next requests already go out. The actor lives while its endpoint has
 * work: it ends when a claim comes back short and nothing is left, and the worker starts it again on the next
 * wake-up. One actor per endpoint with its own slots is what keeps one slow receiver from starving the others.
 */
import { assign, enqueueActions, fromCallback, fromPromise, setup } from 'xstate';
import { errorText } from '../src/errors.ts';
import type {
  ClaimedDelivery,
  ClaimInput,
  DeliveryCommand,
  DeliveryReport,
  RecordInput,
  WebhookDeliveryContext,
  WebhookDeliveryEvent,
  WebhookDeliveryInput,
  WebhookDeliveryOutput,
} from './webhook-delivery-types.ts';

const provided = (name: string) => () => Promise.reject(new Error(`The delivery worker provides the ${name} actor.`));

/** The invoke id of the I/O port. */
const PORT = 'deliveries';

/** Claimed deliveries the actor holds at most: the slots, and `claimAhead` more waiting for one. */
const capacity = (context: WebhookDeliveryContext): number => context.concurrency + context.claimAhead;
const held = (context: WebhookDeliveryContext): number => context.queued.length + context.sending.length;

export const webhookDeliveryMachine = setup({
  types: {
    context: {} as WebhookDeliveryContext,
    events: {} as WebhookDeliveryEvent,
    input: {} as WebhookDeliveryInput,
    output: {} as WebhookDeliveryOutput,
  },
  actors: {
    claim: fromPromise<ClaimedDelivery[], ClaimInput>(provided('claim')),
    deliveries: fromCallback<DeliveryCommand, { endpointId: string }, DeliveryReport>(() => {
      throw new Error('The delivery worker provides the deliveries actor.');
    }),
  },
  delays: {
    claimRetry: ({ context }) => context.policy.claimRetryMs,
  },
  guards: {
    finished: ({ context }) =>
      context.sending.length === 0 && context.recording.length === 0 && (context.stopping || (context.drained && context.queued.length === 0)),
    // Claim once the queue is down to one slot's worth (room for a slot's worth at least): one query then fills
    // several slots, and the slot's worth still queued covers the answers that come in while the claim runs. Claiming
    // as soon as a slot's worth of room appeared made claims of ~20 rows at 48 ahead, each a statement and a few
    // macrosteps of this actor.
    // Outcomes not yet written count against the claim too: a slot is given back when the answer arrives, so without
    // this a database slower than the receivers would let answered-but-unwritten deliveries pile up without bound (and
    // outlive their lease, to be claimed and sent again).
    mayClaim: ({ context }) =>
      !context.stopping &&
      !context.drained &&
      context.recording.length < capacity(context) &&
      capacity(context) - held(context) >= Math.max(context.concurrency, context.claimAhead - context.concurrency),
  },
  actions: {
    /** Moves queued deliveries into free slots and sends them; a stopping actor sends nothing new. */
    fillSlots: enqueueActions(({ context, enqueue }) => {
      const free = context.concurrency - context.sending.length;
      if (context.stopping || context.queued.length === 0 || free <= 0) return;
      const starting = context.queued.slice(0, free);
      enqueue.sendTo(PORT, { type: 'send', deliveries: starting } satisfies DeliveryCommand);
      enqueue.assign({ sending: [...context.sending, ...starting], queued: context.queued.slice(starting.length) });
    }),
    enqueue: assign(({ context }, params: { claimed: ClaimedDelivery[]; limit: number }) => ({
      queued: [...context.queued, ...params.claimed],
      // A short claim means nothing else is due, unless a wake-up came while it ran.
      drained: params.claimed.length < params.limit && !context.wokenDuringClaim,
      wokenDuringClaim: false,
      lastError: null,
    })),
    /** The answers are in: the slots are free, the verdicts made, and the outcomes go to be written. */
    decide: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'sent') return;
      const inputs: RecordInput[] = [];
      for (const attempt of event.outputs) {
        const delivery = context.sending.find((d) => d.id === attempt.deliveryId);
        if (!delivery) continue;
        const verdict = context.policy.decide({
          result: attempt.result,
          attemptNumber: delivery.attemptCount + 1,
          kind: delivery.kind,
          attemptedAt: attempt.attemptedAt,
          jitterSample: attempt.jitterSample,
        });
        inputs.push({ delivery, attempt, verdict });
      }
      if (inputs.length === 0) return;
      const answered = new Set(inputs.map((i) => i.delivery));
      enqueue.sendTo(PORT, { type: 'record', inputs } satisfies DeliveryCommand);
      enqueue.assign({ sending: context.sending.filter((d) => !answered.has(d)), recording: [...context.recording, ...inputs.map((i) => i.delivery.id)] });
    }),
    // The port reports every failure of a request as a result; an error here is a bug. The delivery is left to its
    // lease, which runs out and lets it be claimed again: nothing is lost, and nothing half-known is written.
    abandonSend: assign(({ context, event }) => {
      if (event.type !== 'sendFailed') return {};
      return { sending: context.sending.filter((d) => d.id !== event.deliveryId), lastError: `send: ${errorText(event.error)}` };
    }),
    settle: assign(({ context, event }) => {
      if (event.type !== 'recorded') return {};
      const written = new Set(event.outputs.map((o) => o.deliveryId));
      const disabled = event.outputs.find((o) => o.endpointDisabled !== null)?.endpointDisabled ?? null;
      return {
        recording: context.recording.filter((id) => !written.has(id)),
        ...(disabled === null ? {} : { stopping: true, disabledReason: disabled }),
      };
    }),
    // Writing the outcome failed (the database is away): the lease runs out and the delivery is attempted again.
    forgetRecord: assign(({ context, event }) => {
      if (event.type !== 'recordFailed') return {};
      return { recording: context.recording.filter((id) => id !== event.deliveryId), lastError: `record: ${errorText(event.error)}` };
    }),
  },
}).createMachine({
  id: 'webhookDelivery',
  context: ({ input }) => ({
    policy: input.policy,
    endpointId: input.endpointId,
    concurrency: Math.max(1, input.concurrency),
    claimAhead: Math.max(1, input.claimAhead ?? input.concurrency),
    queued: [],
    sending: [],
    recording: [],
    claimLimit: 0,
    drained: false,
    wokenDuringClaim: false,
    stopping: false,
    disabledReason: null,
    lastError: null,
  }),
  // The I/O port lives as long as the actor; if it fails, nothing in flight can finish: the actor ends, and the
  // leases of what it held run out.
  invoke: {
    id: PORT,
    src: 'deliveries',
    input: ({ context }) => ({ endpointId: context.endpointId }),
    onError: {
      target: '.done',
      actions: assign(({ event }) => ({ lastError: `deliveries: ${errorText(event.error)}`, stopping: true, sending: [], recording: [] })),
    },
  },
  initial: 'claiming',
  on: {
    sent: { actions: ['decide', 'fillSlots'] },
    sendFailed: { actions: ['abandonSend', 'fillSlots'] },
    recorded: { actions: 'settle' },
    recordFailed: { actions: 'forgetRecord' },
    stop: { actions: assign({ stopping: true }) },
  },
  states: {
    claiming: {
      // The limit is fixed when the claim starts: room made while it runs must not make a full claim look short.
      entry: assign(({ context }) => ({ claimLimit: capacity(context) - held(context) })),
      invoke: {
        src: 'claim',
        input: ({ context }): ClaimInput => ({ endpointId: context.endpointId, limit: context.claimLimit }),
        onDone: {
          target: 'running',
          actions: [{ type: 'enqueue', params: ({ context, event }) => ({ claimed: event.output, limit: context.claimLimit }) }, 'fillSlots'],
        },
        onError: {
          target: 'cooling',
          actions: assign(({ event }) => ({ lastError: `claim: ${errorText(event.error)}`, wokenDuringClaim: false })),
        },
      },
      on: { wake: { actions: assign({ wokenDuringClaim: true }) } },
    },
    running: {
      always: [
        { guard: 'finished', target: 'done' },
        { guard: 'mayClaim', target: 'claiming' },
      ],
      on: { wake: { actions: assign({ drained: false }) } },
    },
    // The database refused the claim: wait, then try again (or finish, when stopping and nothing is in flight).
    cooling: {
      always: { guard: 'finished', target: 'done' },
      after: { claimRetry: { target: 'running', actions: assign({ drained: false }) } },
    },
    done: { type: 'final' },
  },
  output: ({ context }) => ({
    disabledReason: context.disabledReason,
    lastError: context.lastError,
    unsent: context.queued.map((d) => d.id),
  }),
});

export type WebhookDeliveryMachine = typeof webhookDeliveryMachine;
