/**
 * Test scenarios of a workspace (docs/scenarios.md): kept by name, checked whole before they are stored, and run on
 * demand. A run is queued in the database and played by whichever engine claims it (scenario-worker.ts); its state is
 * read from the database, so every engine answers for it.
 */
import { randomUUID } from 'node:crypto';
import type { ScenarioListRow, ScenarioRow, ScenarioRunListRow, ScenarioRunRow, ScenariosRepository } from '../../db/repositories/scenarios.repository.ts';
import { AppError, notFound } from '../errors.ts';
import { isUuid } from '../ids.ts';
import { DEFAULT_SCENARIO_RUNS, MAX_OPEN_RUNS, MAX_SCENARIOS, RUNS_KEPT_PER_SCENARIO } from './limits.ts';
import { checkScenario } from './scenario-check.ts';
import type { Scenario } from './scenario-schema.ts';
import { starterSuite, type StarterDeps, type StarterSuite } from './starter-suite.ts';

export interface ScenariosServiceDeps {
  repository: ScenariosRepository;
  /** Whether the service has a language model (LLM_BASE_URL): a judge and a persona say what they need. */
  model: boolean;
  /** A candidate endpoint's URL checked as the integration's (the outbound rules); throws a 422 naming the rule. */
  checkUrl: (url: string) => Promise<string>;
  /** A run was queued: this engine's worker looks for it now. */
  wake: () => void;
  /** What a starter suite is written from, and the model that writes it (./starter-suite.ts). */
  starter: StarterDeps;
}

export interface ScenarioView {
  id: string;
  name: string;
  definition: Scenario;
  created_at: string;
  updated_at: string;
}

export interface ScenarioRunView {
  id: string;
  scenario_id: string;
  /** `running` from the moment it is asked for (`started_at` null while it waits for an engine) until `done`. */
  status: 'running' | 'done';
  runs: number;
  passed: number;
  /** passed / runs once done; null while running. */
  pass_rate: number | null;
  failures: { run: number; turn: number; expectation: string; got: string }[];
  transcripts: unknown[];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** A run in a scenario's list of runs (`GET /v1/scenarios/{id}/runs`): its outcome, without failures or transcripts. */
export type ScenarioRunSummary = Omit<ScenarioRunView, 'scenario_id' | 'failures' | 'transcripts'>;

const iso = (value: Date | string) => new Date(value).toISOString();
const json = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;

function view(row: ScenarioRow | ScenarioListRow): ScenarioView {
  return { id: row.id, name: row.name, definition: json<Scenario>(row.definition), created_at: iso(row.created_at), updated_at: iso(row.updated_at) };
}

function runSummary(row: ScenarioRunListRow): ScenarioRunSummary {
  const done = row.status === 'done';
  return {
    id: row.id,
    status: done ? 'done' : 'running',
    runs: row.runs,
    passed: row.passed,
    pass_rate: done ? (row.runs === 0 ? 0 : row.passed / row.runs) : null,
    created_at: iso(row.created_at),
    started_at: row.started_at === null ? null : iso(row.started_at),
    finished_at: row.finished_at === null ? null : iso(row.finished_at),
  };
}

export function runView(row: ScenarioRunRow): ScenarioRunView {
  const { id, status, runs, passed, pass_rate, created_at, started_at, finished_at } = runSummary(row);
  const failures = json<ScenarioRunView['failures']>(row.failures);
  const transcripts = json<unknown[]>(row.transcripts);
  return { id, scenario_id: row.scenario_id, status, runs, passed, pass_rate, failures, transcripts, created_at, started_at, finished_at };
}

export function createScenariosService(deps: ScenariosServiceDeps) {
  const { repository } = deps;
  const scenarioId = (id: string | undefined) => {
    if (!id || !isUuid(id)) throw notFound('The scenario');
    return id;
  };
  /** Workspaces whose starter suite is being written on this engine: one at a time each, as it costs the model. */
  const writing = new Set<string>();
  const taken = (name: string) => new AppError('conflict', `The workspace has a scenario named ${JSON.stringify(name)} already.`, [{ field: 'name', message: 'is already the name of another test' }]);

  /** The whole check, and a candidate endpoint's address against the outbound rules. */
  async function checked(body: unknown): Promise<Scenario> {
    const scenario = checkScenario(body, { model: deps.model });
    if (typeof scenario.integrator === 'object') await deps.checkUrl(scenario.integrator.url);
    return scenario;
  }

  return {
    async list(workspaceId: string) {
      const rows = await repository.list(workspaceId, MAX_SCENARIOS);
      return rows.map((row) => ({
        ...view(row),
        last_run:
          row.last_run_id === null
            ? null
            : {
                id: row.last_run_id,
                status: row.last_run_status === 'done' ? 'done' : 'running',
                runs: row.last_run_runs,
                passed: row.last_run_passed,
                pass_rate: row.last_run_status === 'done' && row.last_run_runs ? (row.last_run_passed ?? 0) / row.last_run_runs : null,
                finished_at: row.last_run_finished_at === null ? null : iso(row.last_run_finished_at),
              },
      }));
    },

    async get(workspaceId: string, id: string | undefined): Promise<ScenarioView> {
      const row = await repository.find(workspaceId, scenarioId(id));
      if (!row) throw notFound('The scenario');
      return view(row);
    },

    async create(workspaceId: string, body: unknown): Promise<ScenarioView> {
      const scenario = await checked(body);
      if ((await repository.count(workspaceId)) >= MAX_SCENARIOS) {
        throw new AppError('unprocessable', `A workspace keeps at most ${MAX_SCENARIOS} scenarios; delete one first.`);
      }
      const row = await repository.insert({ id: randomUUID(), workspace_id: workspaceId, name: scenario.name, definition: scenario });
      if (row === 'taken') throw taken(scenario.name);
      return view(row);
    },

    async update(workspaceId: string, id: string | undefined, body: unknown): Promise<ScenarioView> {
      const key = scenarioId(id);
      const scenario = await checked(body);
      const row = await repository.update(workspaceId, key, scenario.name, scenario);
      if (row === 'taken') throw taken(scenario.name);
      if (!row) throw notFound('The scenario');
      return view(row);
    },

    async remove(workspaceId: string, id: string | undefined): Promise<void> {
      if (!(await repository.remove(workspaceId, scenarioId(id)))) throw notFound('The scenario');
    },

    /** Queues a run of the scenario as it is now; `runs` overrides the scenario's own. */
    async startRun(workspaceId: string, id: string | undefined, input: { runs?: number }): Promise<{ run: { id: string } }> {
      const row = await repository.find(workspaceId, scenarioId(id));
      if (!row) throw notFound('The scenario');
      if ((await repository.openRuns(workspaceId)) >= MAX_OPEN_RUNS) {
        throw new AppError('rate_limited', `At most ${MAX_OPEN_RUNS} runs of a workspace wait or play at a time; ask again when some are done.`, { retry_after: 5 });
      }
      const scenario = json<Scenario>(row.definition);
      const runs = input.runs ?? scenario.runs ?? DEFAULT_SCENARIO_RUNS;
      const runId = randomUUID();
      await repository.insertRun({ id: runId, workspace_id: workspaceId, scenario_id: row.id, definition: scenario, runs }, RUNS_KEPT_PER_SCENARIO);
      deps.wake();
      return { run: { id: runId } };
    },

    /** Drafts of scripted scenarios from the workspace's knowledge and unanswered questions; nothing is saved. */
    async starter(workspaceId: string): Promise<StarterSuite> {
      if (writing.has(workspaceId)) {
        throw new AppError('rate_limited', 'A starter suite of this workspace is being written already; ask again when it is done.', { retry_after: 5 });
      }
      writing.add(workspaceId);
      try {
        return await starterSuite(deps.starter, workspaceId);
      } finally {
        writing.delete(workspaceId);
      }
    },

    /** The scenario's runs that are kept (the last RUNS_KEPT_PER_SCENARIO, and any still waiting or playing), newest first. */
    async listRuns(workspaceId: string, id: string | undefined): Promise<ScenarioRunSummary[]> {
      const key = scenarioId(id);
      if (!(await repository.find(workspaceId, key))) throw notFound('The scenario');
      // Finished runs beyond the kept ones are deleted when a new run is asked for; open ones are never deleted, so
      // the list may hold a few more than RUNS_KEPT_PER_SCENARIO for a moment: MAX_OPEN_RUNS bounds them.
      return (await repository.listRuns(workspaceId, key, RUNS_KEPT_PER_SCENARIO + MAX_OPEN_RUNS)).map(runSummary);
    },

    async getRun(workspaceId: string, id: string | undefined): Promise<ScenarioRunView> {
      const row = id && isUuid(id) ? await repository.findRun(workspaceId, id) : undefined;
      if (!row) throw notFound('The scenario run');
      return runView(row);
    },
  };
}

export type ScenariosService = ReturnType<typeof createScenariosService>;
