/**
 * The team's presence and assignment (docs/interfaces.md, "Presence and assignment"; docs/architecture.md): every user
 * sets their own presence and sees the team's; every role may assign a waiting conversation to a colleague.
 */
import { isUuid } from '../../ids.ts';
import { notFound } from '../../errors.ts';
import type { AssignmentService } from '../../inbox/assignment.ts';
import type { PresenceService } from '../../inbox/presence.ts';
import type { PresenceStatus } from '../../../db/schema.ts';
import { route, type JsonSchema, type RouteDefinition } from '../route.ts';

const statuses = ['available', 'away', 'offline'] as const;
const presenceSchema: JsonSchema = { type: 'object', required: ['status'], properties: { status: { enum: [...statuses] } } };
export const assignedToSchema: JsonSchema = {
  type: ['object', 'null'],
  required: ['user_id', 'name'],
  properties: { user_id: { type: 'string', format: 'uuid' }, name: { type: 'string' } },
  description: 'Who the conversation is assigned to: its holder while a person holds it, the assignee while it waits; null otherwise.',
};

export function presenceRoutes(deps: { presence: PresenceService; assignment: AssignmentService; idleMinutes: number }): RouteDefinition[] {
  const { presence, assignment } = deps;
  return [
    route({
      method: 'get',
      path: '/v1/me/presence',
      tag: 'team',
      summary: 'Your presence as it holds now (available lapses to away without an open dashboard).',
      access: 'member',
      responses: { 200: { description: 'Your presence.', schema: presenceSchema } },
      async handler({ principal }) {
        return { status: 200, body: await presence.mine(principal) };
      },
    }),

    route<{ status: PresenceStatus }>({
      method: 'put',
      path: '/v1/me/presence',
      tag: 'team',
      summary:
        `Your presence: available (you take waiting conversations, and customers are told a colleague will reply), away or offline. ` +
        `Available holds while you have a dashboard open (its live inbox stream, GET /v1/inbox/events): without one for ${deps.idleMinutes} minutes (PRESENCE_IDLE_MINUTES) it becomes away. ` +
        'Becoming available assigns the oldest waiting conversations nobody is assigned to.',
      access: 'member',
      body: { type: 'object', required: ['status'], additionalProperties: false, properties: { status: { enum: [...statuses] } } },
      responses: { 200: { description: 'Saved.', schema: presenceSchema } },
      async handler({ body, principal }) {
        return { status: 200, body: await presence.set(principal, body.status) };
      },
    }),

    route({
      method: 'get',
      path: '/v1/team/presence',
      tag: 'team',
      summary: 'Everyone of the workspace and their presence now (name: how colleagues and customers see them).',
      access: 'member',
      responses: {
        200: {
          description: 'The team.',
          schema: {
            type: 'object',
            properties: {
              users: {
                type: 'array',
                items: { type: 'object', required: ['id', 'name', 'status'], properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, status: { enum: [...statuses] } } },
              },
            },
          },
        },
      },
      async handler({ principal }) {
        return { status: 200, body: await presence.team(principal.workspaceId) };
      },
    }),

    route<{ user_id: string }>({
      method: 'post',
      path: '/v1/sessions/{id}/assign',
      tag: 'inbox',
      summary:
        'Assign a conversation waiting for a person to a colleague of the workspace (available or not): the inbox shows it as theirs and they are told. ' +
        'Take over stays open to anyone; taking over makes the taker the one it is assigned to.',
      access: 'member',
      body: { type: 'object', required: ['user_id'], additionalProperties: false, properties: { user_id: { type: 'string', format: 'uuid' } } },
      responses: {
        200: { description: 'Assigned.', schema: { type: 'object', required: ['assigned_to'], properties: { assigned_to: assignedToSchema } } },
        404: { description: 'No such session, or no such user in this workspace.' },
        409: { description: 'The conversation is not waiting for a person (conflict): a person holds it, or the bot answers it.' },
        422: { description: 'A phone session (phone_session).' },
      },
      async handler({ body, params, principal }) {
        if (!isUuid(body.user_id)) throw notFound('The user');
        return { status: 200, body: await assignment.assignTo(principal, params.id!, body.user_id) };
      },
    }),
  ];
}
