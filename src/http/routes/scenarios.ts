/**
 * Test scenarios (docs/scenarios.md; docs/interfaces.md, "Scenarios"): scripted test conversations through the real
 * engine, with expectations, run on demand. Owners and admins only: a run talks to the integrator's endpoint and
 * spends the engine's time.
 */
import {
  DEFAULT_SCENARIO_RUNS,
  MAX_OPEN_RUNS,
  MAX_SCENARIO_RUNS,
  MAX_SCENARIOS,
  MAX_STARTER_SCENARIOS,
  RUNS_KEPT_PER_SCENARIO,
  STARTER_QUESTION_DAYS,
} from '../../scenarios/limits.ts';
import { scenarioSchema } from '../../scenarios/scenario-schema.ts';
import type { ScenariosService } from '../../scenarios/scenarios-service.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

const uuid = { type: 'string', format: 'uuid' };
const time = { type: 'string', format: 'date-time' };

const scenarioView: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'definition', 'created_at', 'updated_at'],
  properties: { id: uuid, name: { type: 'string' }, definition: scenarioSchema, created_at: time, updated_at: time },
};

const failure: JsonSchema = {
  type: 'object',
  required: ['run', 'turn', 'expectation', 'got'],
  properties: {
    run: { type: 'integer', description: 'Which play of the run (1-based).' },
    turn: { type: 'integer', description: "Which customer turn (1-based); 0 before the first (the integrator could not be used, or the run could not finish); the judge's on the last turn played." },
    expectation: { type: 'string', description: 'What was expected, as in the scenario: `contains "…"`, `source ai`, `tool order_status {…}`, `max_ms 800`, `judge: <criterion>`, or `judge` when the judge gave no verdict.' },
    got: { type: 'string', description: "What came back; for a criterion the judge's reason." },
  },
};

const runView: JsonSchema = {
  type: 'object',
  required: ['id', 'scenario_id', 'status', 'runs', 'passed', 'pass_rate', 'failures', 'transcripts', 'created_at', 'started_at', 'finished_at'],
  properties: {
    id: uuid,
    scenario_id: uuid,
    status: { enum: ['running', 'done'], description: 'running from the request on (started_at null while it waits for an engine).' },
    runs: { type: 'integer' },
    passed: { type: 'integer', description: 'Plays in which every expectation held.' },
    pass_rate: { type: ['number', 'null'], description: 'passed / runs once done; null while running.' },
    failures: { type: 'array', items: failure },
    transcripts: {
      type: 'array',
      description:
        "Each play: its test conversation (session_id), each turn with the reply, source, handoff, tool calls and time (a simulated customer's turns marked `simulated: true`), " +
        'with a judge `judge`: `{verdicts: [{criterion, pass, reason}]}` or `{error}`, and with a persona `persona`: `{reached, ended: "reached"|"abandoned"|"turns"|"deadline"|"failed", reason, messages}`.',
      items: { type: 'object' },
    },
    created_at: time,
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** A scenario's newest run in the list of scenarios; null before its first. */
const lastRun: JsonSchema = {
  type: ['object', 'null'],
  required: ['id', 'status', 'runs', 'passed', 'pass_rate', 'finished_at'],
  properties: {
    id: uuid,
    status: { enum: ['running', 'done'] },
    runs: { type: ['integer', 'null'] },
    passed: { type: ['integer', 'null'] },
    pass_rate: { type: ['number', 'null'], description: 'passed / runs once done; null while running.' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** A run in a scenario's list of runs: its outcome without failures or transcripts (those: GET /v1/scenario-runs/{id}). */
const runSummary: JsonSchema = {
  type: 'object',
  required: ['id', 'status', 'runs', 'passed', 'pass_rate', 'created_at', 'started_at', 'finished_at'],
  properties: {
    id: uuid,
    status: (runView.properties as Record<string, JsonSchema>).status!,
    runs: { type: 'integer' },
    passed: { type: 'integer' },
    pass_rate: { type: ['number', 'null'], description: 'passed / runs once done; null while running.' },
    created_at: time,
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const invalid = {
  400: { description: 'The body is not a scenario (validation_failed; error.details names the field).' },
  409: { description: 'Another scenario of the workspace has that name (conflict).' },
  422: {
    description:
      'A `matches` pattern that does not compile or may take too long, a candidate URL the outbound rules refuse (invalid_url), a judge or a persona without a model, neither turns nor a persona, a blank criterion or goal, or the workspace\'s ' +
      `${MAX_SCENARIOS + 1}th scenario (unprocessable).`,
  },
};

export function scenarioRoutes(scenarios: ScenariosService): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/scenarios',
      tag: 'scenarios',
      summary: `The workspace's test scenarios by name (at most ${MAX_SCENARIOS}), each with its latest run. Owners and admins.`,
      access: 'manager',
      responses: {
        200: {
          description: 'The scenarios.',
          schema: {
            type: 'object',
            required: ['scenarios'],
            properties: {
              scenarios: {
                type: 'array',
                items: { ...scenarioView, required: [...(scenarioView.required as string[]), 'last_run'], properties: { ...(scenarioView.properties as object), last_run: lastRun } },
              },
            },
          },
        },
      },
      async handler({ workspaceId }) {
        return { status: 200, body: { scenarios: await scenarios.list(workspaceId) } };
      },
    }),

    route({
      method: 'post',
      path: '/v1/scenarios',
      tag: 'scenarios',
      summary: 'Add a test scenario (docs/scenarios.md): a channel, scripted customer turns and what each reply must show, or a simulated customer (persona).',
      access: 'manager',
      // Checked whole by the service (src/scenarios/scenario-check.ts): a judge or persona is a 422 before the shape.
      describedBody: { contentType: 'application/json', schema: scenarioSchema, required: true },
      responses: { 201: { description: 'Added.', schema: { type: 'object', required: ['scenario'], properties: { scenario: scenarioView } } }, ...invalid },
      async handler({ req, workspaceId }) {
        return { status: 201, body: { scenario: await scenarios.create(workspaceId, req.body) } };
      },
    }),

    route({
      method: 'post',
      path: '/v1/scenarios/starter',
      tag: 'scenarios',
      summary:
        `Draft a starter suite: the workspace's model writes up to ${MAX_STARTER_SCENARIOS} scripted web chat scenarios from the knowledge base and the ` +
        `questions customers asked in the last ${STARTER_QUESTION_DAYS} days that the bot could not answer. Nothing is saved: POST the ones to keep. Owners and admins.`,
      access: 'manager',
      responses: {
        200: {
          description: 'The drafts, each a valid scenario; `reason` says why there are none, when there are none.',
          schema: {
            type: 'object',
            required: ['scenarios', 'skipped', 'skipped_reasons', 'reason'],
            properties: {
              scenarios: { type: 'array', items: scenarioSchema },
              skipped: { type: 'integer', description: "Drafts of the model's answer left out: not a valid scenario, a fact not found in the knowledge word for word, a name taken, more than the most." },
              skipped_reasons: { type: 'array', items: { type: 'string' }, description: 'Why, draft by draft (`draft 3: …`; the first 20).' },
              reason: { type: ['string', 'null'], description: 'Why there are no drafts (no knowledge and no unanswered questions yet, or none usable); null when there are.' },
            },
          },
        },
        422: { description: 'The service has no language model (unprocessable).' },
        429: { description: 'A starter suite of the workspace is being written already (rate_limited, Retry-After).' },
        502: { description: "The model failed, did not answer in time, or answered what could not be read at all (model_failed)." },
      },
      async handler({ workspaceId }) {
        return { status: 200, body: await scenarios.starter(workspaceId) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/scenarios/{id}',
      tag: 'scenarios',
      summary: 'One test scenario as written.',
      access: 'manager',
      responses: { 200: { description: 'The scenario.', schema: { type: 'object', required: ['scenario'], properties: { scenario: scenarioView } } }, 404: { description: 'No such scenario in this workspace.' } },
      async handler({ params, workspaceId }) {
        return { status: 200, body: { scenario: await scenarios.get(workspaceId, params.id) } };
      },
    }),

    route({
      method: 'put',
      path: '/v1/scenarios/{id}',
      tag: 'scenarios',
      summary: 'Replace a test scenario (its runs so far keep the version they played).',
      access: 'manager',
      describedBody: { contentType: 'application/json', schema: scenarioSchema, required: true },
      responses: { 200: { description: 'Replaced.', schema: { type: 'object', required: ['scenario'], properties: { scenario: scenarioView } } }, 404: { description: 'No such scenario in this workspace.' }, ...invalid },
      async handler({ req, params, workspaceId }) {
        return { status: 200, body: { scenario: await scenarios.update(workspaceId, params.id, req.body) } };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/scenarios/{id}',
      tag: 'scenarios',
      summary: 'Delete a test scenario, its runs and their test conversations.',
      access: 'manager',
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such scenario in this workspace.' } },
      async handler({ params, workspaceId }) {
        await scenarios.remove(workspaceId, params.id);
        return { status: 204 };
      },
    }),

    route<{ runs?: number }>({
      method: 'post',
      path: '/v1/scenarios/{id}/runs',
      tag: 'scenarios',
      summary:
        `Run a test scenario: played \`runs\` times (the scenario's, default ${DEFAULT_SCENARIO_RUNS}; at most ${MAX_SCENARIO_RUNS}) by one engine; ` +
        `read the result with GET /v1/scenario-runs/{id}. The last ${RUNS_KEPT_PER_SCENARIO} runs of a scenario are kept.`,
      access: 'manager',
      body: {
        type: 'object',
        additionalProperties: false,
        properties: { runs: { type: 'integer', minimum: 1, maximum: MAX_SCENARIO_RUNS, description: "How many times to play it; default the scenario's runs." } },
      },
      responses: {
        202: { description: 'Queued.', schema: { type: 'object', required: ['run'], properties: { run: { type: 'object', required: ['id'], properties: { id: uuid } } } } },
        404: { description: 'No such scenario in this workspace.' },
        429: { description: `${MAX_OPEN_RUNS} runs of the workspace wait or play already (rate_limited, Retry-After).` },
      },
      async handler({ body, params, workspaceId }) {
        return { status: 202, body: await scenarios.startRun(workspaceId, params.id, body) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/scenarios/{id}/runs',
      tag: 'scenarios',
      summary:
        `The runs of a test scenario that are kept (its last ${RUNS_KEPT_PER_SCENARIO}, and any still waiting or playing), newest first: ` +
        'each one\'s status, plays and pass rate; open one with GET /v1/scenario-runs/{id}.',
      access: 'manager',
      responses: {
        200: { description: 'The runs, newest first.', schema: { type: 'object', required: ['runs'], properties: { runs: { type: 'array', items: runSummary } } } },
        404: { description: 'No such scenario in this workspace.' },
      },
      async handler({ params, workspaceId }) {
        return { status: 200, body: { runs: await scenarios.listRuns(workspaceId, params.id) } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/scenario-runs/{id}',
      tag: 'scenarios',
      summary: 'A scenario run: running or done, how many plays passed, the failures and the transcripts. Any engine answers.',
      access: 'manager',
      responses: { 200: { description: 'The run.', schema: runView }, 404: { description: 'No such run in this workspace (or it was removed with old runs).' } },
      async handler({ params, workspaceId }) {
        return { status: 200, body: await scenarios.getRun(workspaceId, params.id) };
      },
    }),
  ];
}
