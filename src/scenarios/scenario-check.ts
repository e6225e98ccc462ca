/**
 * A scenario checked whole (docs/scenarios.md): its shape against the one schema (scenario-schema.ts), then what a
 * schema cannot say. The API and the CLI both check with this, so a file the CLI accepts is one the API stores.
 */
import { unsafePatternReason } from '../botlink/pattern-safety.ts';
import { AppError } from '../errors.ts';
import { compileBodyValidator } from '../http/validation.ts';
import { scenarioSchema, type Scenario } from './scenario-schema.ts';

const validate = compileBodyValidator(scenarioSchema);

/**
 * The scenario, or an AppError: `validation_failed` (400) for the shape, `unprocessable` (422) for a pattern that does
 * not compile or may run too long, for neither turns nor a persona, and for a judge or a persona (a simulated
 * customer) without a model (`model`:
 * whether the service has one; undefined leaves that to the service, as the CLI does).
 */
export function checkScenario(body: unknown, options: { model?: boolean } = {}): Scenario {
  if (options.model !== undefined && typeof body === 'object' && body !== null) {
    if (Object.hasOwn(body, 'judge') && !options.model) {
      throw new AppError(
        'unprocessable',
        'An AI judge needs a language model, and this service has none (LLM_BASE_URL is not set). Leave out judge, or set up a model.',
        [{ field: 'judge', message: 'needs a language model' }],
      );
    }
    if (Object.hasOwn(body, 'persona') && !options.model) {
      throw new AppError(
        'unprocessable',
        'A simulated customer (persona) needs a language model to play it, and this service has none (LLM_BASE_URL is not set). Leave out persona, or set up a model.',
        [{ field: 'persona', message: 'needs a language model' }],
      );
    }
  }
  const scenario = validate(body) as Scenario;
  if (scenario.turns === undefined && scenario.persona === undefined) {
    throw new AppError('unprocessable', "A scenario needs the customer's messages (turns), or a persona (a simulated customer) to write them.", [{ field: 'turns', message: 'is required without a persona' }]);
  }
  const criteria = scenario.judge?.criteria.map((c) => c.trim().toLowerCase()) ?? [];
  criteria.forEach((criterion, i) => {
    const field = `judge.criteria.${i}`;
    if (criterion === '') throw new AppError('unprocessable', `${field} is blank.`, [{ field, message: 'is blank' }]);
    if (criteria.indexOf(criterion) !== i) throw new AppError('unprocessable', `${field} repeats an earlier criterion: the judge gives one verdict per criterion.`, [{ field, message: 'repeats a criterion' }]);
  });
  if (scenario.persona && scenario.persona.goal.trim() === '') throw new AppError('unprocessable', 'persona.goal is blank.', [{ field: 'persona.goal', message: 'is blank' }]);
  (scenario.turns ?? []).forEach((turn, i) => {
    const pattern = turn.expect?.matches;
    if (pattern === undefined) return;
    const field = `turns.${i}.expect.matches`;
    try {
      new RegExp(pattern, 'u');
    } catch (err) {
      throw new AppError('unprocessable', `${field} is not a valid regular expression: ${(err as Error).message}`, [{ field, message: 'not a valid regular expression' }]);
    }
    const unsafe = unsafePatternReason(pattern);
    if (unsafe !== null) throw new AppError('unprocessable', `${field} may take too long to match (${unsafe}); simplify it.`, [{ field, message: 'may take too long to match' }]);
  });
  return scenario;
}
