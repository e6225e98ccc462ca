/**
 * The import graph's rules, checked by `npm run lint` (dependency-cruiser): no circles, data flows one way
 * (docs/architecture.md, "Layout"). An arrow that runs back up fails the lint with the rule's name.
 */
module.exports = {
  forbidden: [
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
      to: { path: '^(db/|src/(sessions|webhooks|channels|http|net|integration|accounts|auth)/|src/(service|main|cli)\\.ts)' },
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
