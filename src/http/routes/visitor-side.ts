/**
 * The visitor's side (docs/interfaces.md, "The team's tools"; docs/webchat.md, "Typing, satisfaction and email"):
 * typing both ways and the satisfaction answer. The widget's routes take the widget key (access `widget`, the gate
 * below /v1/webchat/ checked it) and the conversation's X-Visitor-Token; the agent's typing is for the holder.
 */
import type { SessionsRepository } from '../../../db/repositories/sessions.repository.ts';
import { MAX_SATISFACTION_COMMENT_CHARS, TYPING_MS, TYPING_THROTTLE_MS } from '../../channels/webchat/limits.ts';
import type { VisitorSide } from '../../channels/webchat/visitor-side.ts';
import type { WebchatService } from '../../channels/webchat/webchat-service.ts';
import { VISITOR_TOKEN_HEADER } from '../../channels/webchat/widget-gate.ts';
import { AppError, notFound } from '../../errors.ts';
import { route, type RouteDefinition } from '../route.ts';

const conversationErrors = {
  403: { description: 'The request has no Origin, or the page\'s Origin is not one of the workspace\'s allowed origins (PUT /v1/webchat).' },
  404: { description: 'No such conversation in the widget key\'s workspace, or X-Visitor-Token is missing or not this conversation\'s (nothing is changed).' },
  429: { description: 'Too many requests from this client address, or into this conversation; see Retry-After (seconds).' },
};

export function visitorSideRoutes(deps: { webchat: WebchatService; side: VisitorSide; sessions: Pick<SessionsRepository, 'findById'> }): RouteDefinition[] {
  const { webchat, side, sessions } = deps;
  return [
    route({
      method: 'post',
      path: '/v1/webchat/conversations/{id}/typing',
      tag: 'webchat',
      summary: `The visitor is typing: the team's view of the conversation shows it for ${TYPING_MS / 1000} s after the latest (send one at most every ${TYPING_THROTTLE_MS / 1000} s while keys are pressed; more are answered the same and change nothing). Needs the conversation's X-Visitor-Token.`,
      access: 'widget',
      responses: { 204: { description: 'Noted.' }, ...conversationErrors },
      async handler({ req, params, workspaceId }) {
        await webchat.typing(workspaceId, params.id ?? '', { visitorToken: req.get(VISITOR_TOKEN_HEADER) });
        return { status: 204 };
      },
    }),

    route<{ score: number; comment?: string }>({
      method: 'post',
      path: '/v1/webchat/conversations/{id}/satisfaction',
      tag: 'webchat',
      summary: `The visitor's answer to the one satisfaction question, put after a colleague closed the conversation (the long poll's \`survey: "ask"\`): a score from 1 to 5 and an optional comment of at most ${MAX_SATISFACTION_COMMENT_CHARS} characters; once per conversation. Needs the conversation's X-Visitor-Token.`,
      access: 'widget',
      body: {
        type: 'object',
        required: ['score'],
        additionalProperties: false,
        properties: {
          score: { type: 'integer', description: '1 (bad) to 5 (good); another number is 422.' },
          comment: { type: 'string', description: `At most ${MAX_SATISFACTION_COMMENT_CHARS} characters; longer is 422.` },
        },
      },
      responses: {
        201: {
          description: 'Kept.',
          schema: {
            type: 'object',
            properties: { satisfaction: { type: 'object', properties: { score: { type: 'integer' }, comment: { type: ['string', 'null'] }, at: { type: 'string', format: 'date-time' } } } },
          },
        },
        409: { description: 'Already answered, or no question was put (no colleague closed the conversation) (conflict).' },
        422: { description: 'The score is not from 1 to 5, or the comment is too long (unprocessable).' },
        ...conversationErrors,
      },
      async handler({ req, body, params, workspaceId }) {
        const answer = await webchat.satisfaction(workspaceId, params.id ?? '', { visitorToken: req.get(VISITOR_TOKEN_HEADER), score: body.score, comment: body.comment });
        return { status: 201, body: answer };
      },
    }),

    route({
      method: 'post',
      path: '/v1/sessions/{id}/typing',
      tag: 'inbox',
      summary: `The holder is typing a reply: the web chat widget shows "… is typing" for ${TYPING_MS / 1000} s after the latest, or until the message (send one at most every ${TYPING_THROTTLE_MS / 1000} s while keys are pressed). On WhatsApp nothing is shown.`,
      access: 'member',
      responses: {
        204: { description: 'Noted.' },
        404: { description: 'No such session.' },
        409: { description: 'You do not hold the conversation (not_holder).' },
      },
      async handler({ params, principal }) {
        const row = params.id ? await sessions.findById(principal.workspaceId, params.id) : undefined;
        if (!row) throw notFound('The session');
        if (row.handled_by !== 'agent' || row.agent_user_id !== principal.userId) {
          throw new AppError('not_holder', 'Only the user who holds this conversation writes in it: take it over first (POST /v1/sessions/{id}/takeover).');
        }
        await side.agentTyping(row);
        return { status: 204 };
      },
    }),
  ];
}
