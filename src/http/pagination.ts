/**
 * Lists answered a page at a time, newest first (sessions, the webhook delivery log): `limit` items per answer
 * (1–MAX_LIST_LIMIT, default DEFAULT_LIST_LIMIT) and `before`, the `next_before` of the previous answer.
 */
import { AppError } from '../errors.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../limits.ts';
import type { JsonSchema } from './route.ts';

/** The `limit` and `before` query parameters for /openapi.json; `before` says what it compares with. */
export function pageQuery(beforeDescription: string): Record<'limit' | 'before', JsonSchema> {
  return {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, description: `Default ${DEFAULT_LIST_LIMIT}.` },
    before: { type: 'string', format: 'date-time', description: beforeDescription },
  };
}

/** Reads `limit` and `before` from the query; a 400 (validation_failed) names the one that is wrong. */
export function readPage(query: Record<string, string | undefined>): { limit: number; before?: Date } {
  const limit = query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new AppError('validation_failed', `limit must be a whole number from 1 to ${MAX_LIST_LIMIT}.`, [{ field: 'limit', message: 'is out of range' }]);
  }
  if (query.before === undefined) return { limit };
  const before = new Date(query.before);
  if (Number.isNaN(before.getTime())) throw new AppError('validation_failed', 'before must be an ISO 8601 time.', [{ field: 'before', message: 'is not a time' }]);
  return { limit, before };
}
