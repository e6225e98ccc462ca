/**
 * The import graph's rules, checked by `npm run lint` (dependency-cruiser): no circles, data flows one way
 * (docs/architecture.md, "Layout"). An arrow that runs back up fails the lint with the rule's name.
 */
/**
 * The floors of the house, lowest first (docs/architecture.md, "Layout"). A module may import its own floor and the
 * floors below it; an import of a higher floor is an arrow that runs back up and fails the lint ("no-arrow-up-N").
 * A folder sits on one floor only; a new folder must be placed here (the lint fails on a module no floor holds).
 */
const FLOORS = [
  // shared words: errors, limits, words, text, JSON, ids, logging, metrics, settings
  ['src/(errors|limits|rate-limiter|channels-and-handoffs|json-value|ids|log|metrics|config|data-dir-lock|tracing)\\.ts$', 'src/(text|leases)/'],
  // storage, the guarded network, secrets, credentials, the live bus
  ['db/', 'src/(net|secrets|auth|events|email)/'],
  // the clients: the Bot Link, the knowledge base, the AI; the integrators' kit
  ['src/(botlink|knowledge|ai|receiver)/'],
  // the statecharts (their I/O is supplied from above)
  ['machines/'],
  // conversations, accounts, outgoing webhooks, the integration's settings
  ['src/(sessions|accounts|webhooks|integration|analytics)/'],
  // admission of new work, the team's side
  ['src/(admission|inbox)/'],
  // the channels, and customers' data across them
  ['src/channels/', 'src/privacy/'],
  // HTTP, and the test scenarios: they play the channels as customers do, and are checked as the API checks a body
  ['src/http/', 'src/scenarios/'],
  // putting it together: the composition root (src/app/: the service and its stages), the entry points, the operator's
  // command line
  ['src/app/', 'src/(main|bootstrap|cli)\\.ts$', 'src/cli/'],
];
const floorPath = (floor) => `^(${floor.join('|')})`;
const arrowsUp = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `no-arrow-up-${i}`,
  severity: 'error',
  comment: 'An import from a lower floor to a higher one: move what both need down to the lower floor.',
  from: { path: floorPath(floor) },
  to: { path: floorPath(FLOORS.slice(i + 1).flat()) },
}));

module.exports = {
  forbidden: [
    ...arrowsUp,
    {
      name: 'on-a-floor',
      severity: 'error',
      comment: 'Every module of the service sits on a floor (FLOORS above), so the arrows-up rules see it.',
      from: { path: '^(src|machines|db)/', pathNot: [floorPath(FLOORS.flat()), '^src/(dashboard|widget)/'] },
      to: {},
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A circle of imports: two modules that need each other are one concept, or one of them owns a word the other should.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'db-below-src',
      severity: 'error',
      comment: 'db/ (migrations, table types, thin repositories) knows nothing of the service above it.',
      from: { path: '^db/' },
      to: { path: '^(src|machines)/' },
    },
    {
      name: 'machines-below-runtimes',
      severity: 'error',
      comment: 'A statechart imports no runtime that runs it (and no I/O): the runtime passes its policy and actors in.',
      from: { path: '^machines/' },
      to: { path: '^(db/|src/(sessions|webhooks|channels|http|net|integration|accounts|auth|app)/|src/(main|cli)\\.ts)' },
    },
    {
      name: 'src-not-into-tests-or-bench',
      severity: 'error',
      comment: 'The service never imports its tests, benchmarks or examples.',
      from: { path: '^(src|machines|db)/' },
      to: { path: '^(test|bench|docs)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
