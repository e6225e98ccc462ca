/**
 * PostgreSQL's unique_violation (SQLSTATE 23505; PGlite reports the same code), read here and nowhere above `db/`:
 * a repository answers what a taken value means for its rows (`'taken'`, null), not the database's code.
 */
const UNIQUE_VIOLATION = '23505';

/** Whether `err` is a unique violation; of `constraint` when one is given and the driver names it. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null | undefined;
  if (e?.code !== UNIQUE_VIOLATION) return false;
  return constraint === undefined || e.constraint === undefined || e.constraint === constraint;
}
