/**
 * What `startService` (src/app/service.ts) takes: the configuration, and the timings and bounds tests and benchmarks set
 * shorter. Apart from src/app/service.ts so the composition root's stages (src/app/*.ts) read it without a circle; each
 * stage's input picks the members it reads.
 */
import type { OpenedDatabase } from '../../db/database.ts';
import type { AdmissionLimits } from '../admission/admission.ts';
import type { RateLimitOptions } from '../rate-limiter.ts';
import type { LoginThrottleOptions } from '../auth/login-throttle.ts';
import type { StreamGuardOptions } from '../auth/stream-guard.ts';
import type { EndpointHealthTrackerDeps } from '../botlink/endpoint-health-tracker.ts';
import type { PhoneChannelOptions } from '../channels/phone/phone-channel.ts';
import type { WhatsappChannelOptions } from '../channels/whatsapp/whatsapp-channel.ts';
import type { Config } from '../config.ts';
import type { LiveBusDeps } from '../events/live-bus.ts';
import type { Logger } from '../log.ts';
import type { GuardedClientOptions } from '../net/guarded-client.ts';
import type { DeliveryWorkerOptions } from '../webhooks/delivery-worker.ts';

export const VERSION = '0.1.0';
/** How long SIGTERM waits for calls, turns, messages and deliveries in flight (each stage), in ms. */
export const DEFAULT_DRAIN_MS = 10_000;

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  /** Tests: an already opened database (skips opening and the data-dir lock). */
  database?: OpenedDatabase;
  /** Tests: DNS for the guarded client. */
  lookup?: GuardedClientOptions['lookup'];
  /** How long SIGTERM waits for requests in flight; default {@link DEFAULT_DRAIN_MS}. */
  drainMs?: number;
  /** Session runtime settings (tests use short ones). */
  sessions?: { idleMs?: number; instanceId?: string };
  /** Live events across engines: how often they are read without a NOTIFY (tests use short ones). */
  live?: Pick<LiveBusDeps, 'pollMs' | 'watchesRefreshMs'>;
  /** WhatsApp: `processing: false` stores webhooks without processing them (ingest benchmark); worker timings for tests. */
  whatsapp?: Pick<WhatsappChannelOptions, 'processing' | 'worker'>;
  /** Website chat: the per-widget-key rate limit (tests use a short window); defaults in src/channels/webchat/limits.ts. */
  webchat?: { rateLimit?: Pick<RateLimitOptions, 'burst' | 'windowMs'> };
  /** The email outbox: how often it looks for due emails and the first retry's wait (ms); defaults in src/email/limits.ts. */
  email?: { pollMs?: number; retryBaseMs?: number };
  /** Phone: filler, heartbeat and key-entry timings (tests use short ones), and the clock of team hours. */
  phone?: PhoneChannelOptions;
  /** Outgoing webhooks: delivery worker settings (tests use short ones); defaults in src/webhooks/limits.ts. */
  webhooks?: Pick<DeliveryWorkerOptions, 'instanceId' | 'endpointConcurrency' | 'maxInFlight' | 'pollIntervalMs' | 'timeoutMs' | 'leaseMs'>;
  /**
   * Admission control's bounds (tests use small ones); default: src/admission/limits.ts for the embedded default (PGlite
   * opened from DATA_DIR), none on PostgreSQL or on a database handed in (tests, benches).
   */
  admission?: AdmissionLimits;
  /** Endpoint health: refresh, flush and probe intervals (tests use short ones); defaults in src/botlink/endpoint-health-tracker.ts. */
  health?: Pick<EndpointHealthTrackerDeps, 'refreshMs' | 'flushMs' | 'probeIntervalMs'>;
  /**
   * The inbox: how often waiting conversations past their hand-back deadline are looked for (ms; default
   * HANDBACK_SWEEP_MS), open dashboards are marked seen (PRESENCE_TOUCH_MS) and lapsed presence and unassigned waiting
   * conversations are looked for (PRESENCE_SWEEP_MS).
   */
  inbox?: { handbackSweepMs?: number; presenceTouchMs?: number; presenceSweepMs?: number };
  /**
   * The dashboard's budgets (tests use other figures or a clock of their own): "Try a question" and the take-over
   * summaries per workspace, an agent's messages per agent and conversation; defaults TRY_QUESTION_RATE_LIMIT
   * (src/knowledge/limits.ts), SUMMARY_RATE_LIMIT and AGENT_MESSAGE_RATE_LIMIT (src/inbox/limits.ts).
   */
  rateLimits?: { tryQuestion?: RateLimitOptions; summaries?: RateLimitOptions; agentMessages?: RateLimitOptions };
  /** Live streams: how often their tokens are checked again, and their limits; defaults in src/limits.ts. */
  streams?: Pick<StreamGuardOptions, 'recheckMs' | 'maxPerUser' | 'maxPerWorkspace'>;
  /** Sign-in: the first wait after the failure threshold (tests of what happens during a wait use a long one). */
  signIn?: Pick<LoginThrottleOptions, 'firstWaitMs'>;
  /** Knowledge sources: how often due syncs are looked for (ms; default SOURCE_POLL_MS); 0: only when one is asked for. */
  knowledgeSources?: { intervalMs?: number };
  /**
   * The AI's questions for passages: how often due workspaces are looked for, the wait after the model failed, and a
   * request's deadline (ms; defaults in src/knowledge/doc2query/limits.ts).
   */
  knowledgeQuestions?: { intervalMs?: number; retryMs?: number; timeoutMs?: number };
  /**
   * The knowledge's embeddings (LLM_EMBEDDING_MODEL): how often due workspaces are looked for, the wait after the
   * model failed, and the question's deadline (ms; defaults in src/knowledge/embeddings/limits.ts).
   */
  knowledgeEmbeddings?: { intervalMs?: number; retryMs?: number; questionTimeoutMs?: number };
  /** Retention: how often the purge is tried (ms; default PURGE_INTERVAL_MS); 0 leaves it to `retention.purge()`. */
  retention?: { intervalMs?: number };
  /**
   * Test scenarios: how often an engine looks for runs (ms), how many it plays at once, the judge's deadline (ms), the
   * simulated customer's per request and per play (ms), and the starter suite's (ms); defaults in src/scenarios/limits.ts.
   */
  scenarios?: {
    pollMs?: number;
    concurrency?: number;
    judgeTimeoutMs?: number;
    personaTimeoutMs?: number;
    personaDeadlineMs?: number;
    starterTimeoutMs?: number;
  };
  /**
   * Saved checks run again after a knowledge change: how often due workspaces are looked for (0: only when asked), the
   * quiet spell after the latest write, the longest wait after the first, the clock; defaults in src/scenarios/limits.ts.
   */
  knowledgeRechecks?: { intervalMs?: number; quietMs?: number; maxWaitMs?: number; retryMs?: number; now?: () => Date };
}
