/**
 * The Overview's first-day list (docs/analytics.md, "The first day"): `GET /v1/workspace/first-day` (owners and
 * admins) → `{steps:[{id, done}], done}`, each step ticked from the workspace's real state, in the order the list and
 * the first start's next steps name them (src/bootstrap.ts).
 */
import type { FirstDayRepository, FirstDayState } from '../../../db/repositories/first-day.repository.ts';
import { FIRST_WORKSPACE } from '../../accounts/first-workspace.ts';
import { notFound } from '../../errors.ts';
import { route, type RouteDefinition } from '../route.ts';

/** The steps, in order, and the state that ticks each. */
export const FIRST_DAY_STEPS = [
  ['name_workspace', 'named'],
  ['add_knowledge', 'knowledge'],
  ['try_question', 'tried'],
  ['put_chat_on_site', 'chat_on_site'],
  ['invite_colleague', 'colleague'],
  ['set_availability', 'availability'],
] as const satisfies readonly (readonly [string, keyof FirstDayState])[];

export function firstDayRoutes(deps: { firstDay: FirstDayRepository }): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/workspace/first-day',
      tag: 'workspace',
      summary:
        "The first-day list on the Overview: name the workspace, add knowledge, try a question, put the chat on your site, invite a colleague, set who is available; " +
        'each ticked from what the workspace holds (a name other than the first start\'s placeholder, any knowledge, a question tried on the Knowledge screen, the chat on for a listed site, a second user, somebody who set their presence).',
      access: 'manager',
      responses: {
        200: {
          description: 'The steps in order, and whether all are done.',
          schema: {
            type: 'object',
            required: ['steps', 'done'],
            properties: {
              steps: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'done'],
                  properties: { id: { type: 'string', enum: FIRST_DAY_STEPS.map(([id]) => id) }, done: { type: 'boolean' } },
                },
              },
              done: { type: 'boolean' },
            },
          },
        },
      },
      async handler({ workspaceId }) {
        const state = await deps.firstDay.state(workspaceId, FIRST_WORKSPACE.name);
        if (!state) throw notFound('The workspace');
        const steps = FIRST_DAY_STEPS.map(([id, key]) => ({ id, done: state[key] }));
        return { status: 200, body: { steps, done: steps.every((s) => s.done) } };
      },
    }),
  ];
}
