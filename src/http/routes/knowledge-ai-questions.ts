/**
 * The questions the AI writes for each passage (docs/knowledge.md, "Questions written by the AI"): what they cost so
 * far. Every user of the workspace reads it; nothing here changes them (the setting KNOWLEDGE_AI_QUESTIONS turns the
 * writing off for the whole service).
 */
import type { EmbeddingsSummary } from '../../../db/repositories/knowledge-embeddings.repository.ts';
import type { QuestionsSummary } from '../../../db/repositories/knowledge-phrasings-jobs.repository.ts';
import { route, type RouteDefinition } from '../route.ts';

export function knowledgeAiQuestionRoutes(deps: {
  enabled: boolean;
  summary: (workspaceId: string) => Promise<QuestionsSummary>;
  /** The embeddings' figures (docs/knowledge.md, "Embeddings"); null: LLM_EMBEDDING_MODEL is not set. */
  embeddings: ((workspaceId: string) => Promise<EmbeddingsSummary>) | null;
}): RouteDefinition[] {
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
              embeddings: {
                type: 'object',
                description: 'The embeddings of passages and phrasings, ranked with the search: only when this service makes them (LLM_EMBEDDING_MODEL is set).',
                required: ['vectors', 'passages', 'tokens'],
                properties: {
                  vectors: { type: 'integer', description: "Vectors kept now for the current model (passages' and phrasings')." },
                  passages: { type: 'integer', description: 'Passages with a vector of their own.' },
                  tokens: { type: 'integer', description: "The model's tokens spent on the vectors kept now." },
                },
              },
            },
          },
        },
      },
      async handler({ workspaceId }) {
        const embeddings = deps.embeddings ? { embeddings: await deps.embeddings(workspaceId) } : {};
        return { status: 200, body: { enabled: deps.enabled, ...(await deps.summary(workspaceId)), ...embeddings } };
      },
    }),
  ];
}
