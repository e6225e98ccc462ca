/**
 * Saved checks and the answers a knowledge change moved (docs/scenarios.md, "Answers a knowledge change moved"):
 * owners and admins save a question with the answer it gets now, and read which answers the latest knowledge change
 * moved. Owners and admins only, as "Try a question": saving asks the model.
 */
import type { KnowledgeChecks } from '../../scenarios/knowledge-checks.ts';
import { MAX_KNOWLEDGE_CHECKS, RECHECK_MAX_WAIT_MS, RECHECK_QUIET_MS } from '../../scenarios/limits.ts';
import { TRY_QUESTION_RATE_LIMIT } from '../../knowledge/limits.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';
import { problems422, tryBody, unprocessableIfInvalid } from './knowledge.ts';

const uuid = { type: 'string', format: 'uuid' };
const time = { type: 'string', format: 'date-time' };
const answer: JsonSchema = {
  type: 'object',
  properties: { text: { type: 'string', description: 'As the website chat shows it.' }, source: { enum: ['ai', 'knowledge_base', 'fallback'] } },
};
const checkView: JsonSchema = {
  type: 'object',
  properties: { id: uuid, question: { type: 'string' }, language: { type: 'string' }, answer: { ...answer, description: 'The expected answer.' }, created_at: time, updated_at: time },
};
const changesView: JsonSchema = {
  type: 'object',
  properties: {
    pending: { type: 'boolean', description: 'A knowledge write waits for its re-run.' },
    change: {
      type: ['object', 'null'],
      description: 'The latest re-run; null before the first.',
      properties: {
        id: uuid,
        started_at: time,
        finished_at: time,
        checks: { type: 'integer', description: 'Saved checks asked again.' },
        same: { type: 'integer', description: 'Of those, how many got the same answer.' },
        changed: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              check_id: uuid,
              question: { type: 'string' },
              language: { type: 'string' },
              before: answer,
              after: answer,
              accepted: { type: 'boolean', description: "The check's expected answer is the new one (POST /v1/knowledge/checks/{id}/accept)." },
            },
          },
        },
        scenarios: {
          type: 'array',
          description: 'Web-chat scenarios played again: the latest run before the change and the one after it.',
          items: {
            type: 'object',
            properties: {
              scenario_id: uuid,
              name: { type: 'string' },
              before: { type: 'object', properties: { run_id: uuid, runs: { type: 'integer' }, passed: { type: 'integer' } } },
              after: {
                type: 'object',
                properties: {
                  run_id: uuid,
                  status: { enum: ['running', 'done', 'gone'], description: 'gone: no longer kept.' },
                  runs: { type: ['integer', 'null'] },
                  passed: { type: ['integer', 'null'], description: 'null until done.' },
                },
              },
            },
          },
        },
      },
    },
  },
};

const checkBody = unprocessableIfInvalid<{ question: string; language?: string }>(tryBody);

export function knowledgeCheckRoutes(checks: KnowledgeChecks): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/knowledge/checks',
      tag: 'knowledge',
      summary: `The saved checks (at most ${MAX_KNOWLEDGE_CHECKS}): questions kept with their expected answer, asked again after each knowledge change.`,
      access: 'manager',
      responses: { 200: { description: 'The checks, oldest first.', schema: { type: 'object', properties: { checks: { type: 'array', items: checkView } } } } },
      async handler({ workspaceId }) {
        return { status: 200, body: { checks: await checks.list(workspaceId) } };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/checks',
      tag: 'knowledge',
      summary:
        "Save a question with the answer it gets now (the website chat's answer from the knowledge base, without the integrator). " +
        `Asked again after each change of the knowledge. Counts against a budget of the size of Try a question's (${TRY_QUESTION_RATE_LIMIT.burst} at once).`,
      access: 'manager',
      body: { type: 'object' },
      describedBody: { contentType: 'application/json', schema: tryBody, required: true },
      responses: {
        201: { description: 'Saved.', schema: { type: 'object', properties: { check: checkView } } },
        409: { description: 'The question is saved already in that language (conflict).' },
        422: problems422(`The question is missing or wrong, or the workspace has ${MAX_KNOWLEDGE_CHECKS} checks already;`),
        429: { description: 'The budget is spent (rate_limited); Retry-After says when to try again.' },
      },
      async handler({ body, workspaceId }) {
        return { status: 201, body: { check: await checks.create(workspaceId, checkBody(body)) } };
      },
    }),

    route({
      method: 'delete',
      path: '/v1/knowledge/checks/{id}',
      tag: 'knowledge',
      summary: 'Delete a saved check.',
      access: 'manager',
      responses: { 204: { description: 'Deleted.' }, 404: { description: 'No such check in this workspace.' } },
      async handler({ params, workspaceId }) {
        await checks.remove(workspaceId, params.id);
        return { status: 204 };
      },
    }),

    route({
      method: 'post',
      path: '/v1/knowledge/checks/{id}/accept',
      tag: 'knowledge',
      summary: "The latest re-run's answer to the check becomes its expected answer.",
      access: 'manager',
      responses: {
        200: { description: 'Accepted.', schema: { type: 'object', properties: { check: checkView } } },
        404: { description: 'No such check in this workspace.' },
        409: { description: "The latest re-run did not change this check's answer (conflict)." },
      },
      async handler({ params, workspaceId }) {
        return { status: 200, body: { check: await checks.accept(workspaceId, params.id) } };
      },
    }),

    route({
      method: 'get',
      path: '/v1/knowledge/changes',
      tag: 'knowledge',
      summary:
        'The latest re-run after a knowledge change: the saved checks whose answer changed (before and after) and the web-chat scenarios played again. ' +
        `A re-run starts once the knowledge had no write for ${RECHECK_QUIET_MS / 1000} s (at most ${RECHECK_MAX_WAIT_MS / 60_000} min after the first).`,
      access: 'manager',
      responses: { 200: { description: 'The latest re-run.', schema: changesView } },
      async handler({ workspaceId }) {
        return { status: 200, body: await checks.changes(workspaceId) };
      },
    }),
  ];
}
