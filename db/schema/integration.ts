/** Table types of the integration: the integrator's Bot Link endpoint and that endpoint's health. */
import type { ColumnType, Insertable, Selectable } from 'kysely';
import type { Timestamp } from './columns.ts';

export interface IntegrationsTable {
  workspace_id: string;
  endpoint_url: string;
  /** The shared key, sealed with the master key (AES-256-GCM, bound to the workspace id). */
  key_sealed: string;
  key_hint: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type Integration = Selectable<IntegrationsTable>;
export type NewIntegration = Insertable<IntegrationsTable>;

// Endpoint health (migration 0012; src/botlink/endpoint-health.ts). One row per workspace, shared by every process.

export interface EndpointHealthTable {
  workspace_id: string;
  /** The endpoint these outcomes belong to; a new URL starts healthy. */
  endpoint_url: string;
  state: 'healthy' | 'degraded' | 'down' | 'probing';
  since: Timestamp;
  consecutive_failures: number;
  consecutive_responses: number;
  last_failure_at: Timestamp | null;
  /** The newest outcomes, oldest first: `[{at, kind, latencyMs}]` with `at` in ms since the epoch. */
  recent: ColumnType<unknown, string, string>;
  last_problem: string | null;
  /** The last background probe (any process): probes are spaced by HEALTH_PROBE_INTERVAL_MS across processes. */
  probed_at: Timestamp | null;
  updated_at: Timestamp;
}
