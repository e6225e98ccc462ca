/**
 * What the WhatsApp worker's stages share (docs/whatsapp.md, "Processing: the worker"): its settings, its name in the claims, and
 * its mutable state in one object, so the read, answer and send stages (read-stage.ts, answer-stage.ts,
 * send-stage.ts) and the claim loop (worker.ts) each see the same counters and chains.
 */
import type { Lease, LeaseKeeper } from '../../leases/lease-keeper.ts';
import type { Logger } from '../../log.ts';
import type { WhatsappOutboundMessage } from '../../../db/schema.ts';
import type { WhatsappRepository } from '../../../db/repositories/whatsapp.repository.ts';
import type { SessionRuntime } from '../../sessions/session-runtime.ts';
import type { GraphClient } from './graph-client.ts';
import type { WhatsappMetrics } from './metrics.ts';
import type { WhatsappSettings } from './settings.ts';
import type { SatisfactionTaps } from './satisfaction.ts';

export interface WhatsappWorkerOptions {
  repository: WhatsappRepository;
  settings: Pick<WhatsappSettings, 'workspaceFor' | 'credentials'>;
  runtime: Pick<SessionRuntime, 'handleMessage'>;
  graph: Pick<GraphClient, 'send'>;
  /** A tap on a reply button: the satisfaction question's answer (src/channels/whatsapp/satisfaction.ts); absent: none is. */
  satisfaction?: SatisfactionTaps;
  /** Whether the workspace takes conversations (AccountsService.isServing); absent: every workspace does. */
  serving?: (workspaceId: string) => Promise<boolean>;
  logger: Logger;
  metrics?: WhatsappMetrics;
  /** Names this process in `lease_owner`; default a random id. */
  owner?: string;
  /** The lease of a message being answered and of a reply being sent; default LEASE_MS (src/leases/durations.ts). */
  leaseMs?: number;
  /** Backstop poll in ms; default {@link WORKER_POLL_MS}. */
  pollMs?: number;
  /** Waits before each retry of a send; default {@link SEND_RETRY_DELAYS_MS}. */
  retryDelaysMs?: readonly number[];
  /** Silence after which a customer's next message starts a new conversation; default {@link CONVERSATION_IDLE_MS}. */
  conversationIdleMs?: number;
  /** The clock of the retention sweep, the status window, payload times and `Retry-After`, ms since epoch; default Date.now. */
  now?: () => number;
  /** Uniform in [0, 1): the jitter of retry delays; default Math.random. */
  random?: () => number;
  /**
   * The delivery status of an agent's message may have changed: its send was answered (`outboundId`), or Meta's
   * status webhooks named messages of the workspace (`messageIds`). The team's side shows it live.
   */
  onDelivery?: (change: { workspaceId: string; outboundId?: string; messageIds?: string[] }) => void;
}

/** The worker's state: read and written by the loop and the stages, nowhere else. */
export interface WorkerState {
  running: boolean;
  /** Customer messages claimed and not yet answered (in a chain or in turn). */
  turns: number;
  /** Replies being sent. */
  sends: number;
  lastPrune: number;
  /** Per customer (workspace + wa_id): the tail of their chain of messages being answered. */
  readonly chains: Map<string, Promise<void>>;
  readonly inFlight: Set<Promise<void>>;
  readonly timers: Set<NodeJS.Timeout>;
  /** Aborts the sends in flight when the worker stops. */
  readonly stopSends: AbortController;
}

export interface WorkerContext {
  options: WhatsappWorkerOptions;
  log: Logger;
  /** This process's name in `lease_owner`. */
  owner: string;
  now: () => number;
  state: WorkerState;
  sendLeases: LeaseKeeper;
  /** A pass of the claim loop now, or after `ms`. */
  wake(what?: 'all' | 'sends'): void;
  wakeAfter(ms: number): void;
  /** Counts work in flight (`idle()` and `stop()` wait for it). */
  track(work: Promise<void>): void;
}

/** Stage 3 as the answer stage calls it: a reply's first attempt, in its customer's chain. */
export type Deliver = (row: WhatsappOutboundMessage, lease: Lease) => Promise<void>;
