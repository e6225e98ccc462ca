/** Table types of the test scenarios (migration 0039, docs/scenarios.md): scenarios and their runs. */
import type { ColumnType, Generated } from 'kysely';
import type { Json, Timestamp } from './columns.ts';

export interface ScenariosTable {
  id: string;
  workspace_id: string;
  /** One per workspace: the CLI finds a scenario by it. */
  name: string;
  /** The scenario as written and checked (src/scenarios/scenario-schema.ts). */
  definition: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ScenarioRunStatus = 'queued' | 'running' | 'done';

export interface ScenarioRunsTable {
  id: string;
  workspace_id: string;
  scenario_id: string;
  /** The scenario as it was when the run was asked for. */
  definition: Json;
  status: Generated<ScenarioRunStatus>;
  /** How many times the scenario is played, and how many of those met every expectation. */
  runs: number;
  passed: Generated<number>;
  /** `[{run, turn, expectation, got}]`. */
  failures: ColumnType<unknown, string | undefined, string>;
  /** `[{run, session_id, turns: […]}]`: what was said, for reading a failure. */
  transcripts: ColumnType<unknown, string | undefined, string>;
  /** The engine that runs it, until `lease_until` (renewed while it runs). */
  lease_owner: string | null;
  lease_until: Timestamp | null;
  attempts: Generated<number>;
  created_at: Timestamp;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
}

/** A question saved with the answer it got (migration 0040; docs/scenarios.md, "Answers a knowledge change moved"). */
export interface KnowledgeChecksTable {
  id: string;
  workspace_id: string;
  question: string;
  /** The language it was answered in; a re-run asks in the same one. */
  language: string;
  /** The expected answer (as the website chat would show it) and who gave it (knowledge_base, ai, fallback). */
  answer: string;
  source: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A workspace whose knowledge was written since its last re-run: one row however many writes. */
export interface KnowledgeChangeMarksTable {
  workspace_id: string;
  first_at: Timestamp;
  last_at: Timestamp;
}

/** One re-run of a workspace's checks and knowledge scenarios after a knowledge change. */
export interface KnowledgeRechecksTable {
  id: string;
  workspace_id: string;
  started_at: Timestamp;
  finished_at: Timestamp;
  knowledge_version: string;
  /** `[{check_id, question, language, before, before_source, after, after_source, changed}]`. */
  checks: Json;
  /** `[{scenario_id, name, before: {run_id, runs, passed}, after_run_id}]`. */
  scenarios: Json;
}
