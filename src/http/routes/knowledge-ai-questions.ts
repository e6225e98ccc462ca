/**
 * The questions the AI writes for each passage (docs/knowledge.md, "Questions written by the AI"): what they cost so
 * far. Every user of the workspace reads it; nothing here changes them (the setting KNOWLEDGE_AI_QUESTIONS turns the
 * writing off for the whole service).
 */
import type { QuestionsSummary } from '../../../db/repositories/knowledge-phrasings-jobs.repository.ts';
import { route, type RouteDefinition } from '../route.ts';

export function knowledgeAiQuestionRoutes(deps: { enabled: boolean; summary: (workspaceId: string) => Promise<QuestionsSummary> }): RouteDefinition[] {
  return [
    route({
      method: 'get',
      path: '/v1/knowledge/ai-questions',
      tag: 'knowledge',
      summary:
        "The questions the AI wrote for the knowledge's passages (searched like the passages' text): how many, for how " +
        'many passages, and the tokens the model used for the ones kept now.',
      access: 'member',
      responses: {
        200: {
          description: 'The count and cost.',
          schema: {
            type: 'object',
            required: ['enabled', 'questions', 'passages', 'tokens'],
            properties: {
              enabled: { type: 'boolean', description: 'Whether this service writes them: a model is set and KNOWLEDGE_AI_QUESTIONS is not off.' },
              questions: { type: 'integer', description: 'Questions kept now.' },
              passages: { type: 'integer', description: 'Passages they belong to.' },
              tokens: { type: 'integer', description: "The model's tokens (prompt and completion) spent on the questions kept now; replaced and dropped ones are not counted." },
            },
          },
        },
      },
      async handler({ workspaceId }) {
        return { status: 200, body: { enabled: deps.enabled, ...(await deps.summary(workspaceId)) } };
      },
    }),
  ];
}
