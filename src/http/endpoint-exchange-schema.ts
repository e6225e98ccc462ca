/**
 * What one call to the integrator's endpoint did, as the routes that try it for the owner answer it (the
 * integration's test, the knowledge base's try with the integrator): the same five fields lead both answers.
 */
import type { JsonSchema } from './route.ts';

export const exchangeProperties: Record<string, JsonSchema> = {
  outcome: { enum: ['answer', 'no_answer'] },
  reason: { type: 'string' },
  message: { type: 'string' },
  http_status: { type: ['integer', 'null'] },
  latency_ms: { type: 'integer' },
};
