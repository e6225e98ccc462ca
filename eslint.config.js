// Lint: typescript-eslint's recommended rules plus the project's own habits (type-only imports, no console in src).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'bench/results/', 'coverage/'] },
  // dependency-cruiser reads its rules as CommonJS.
  { files: ['.dependency-cruiser.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['src/**/*.ts', 'machines/**/*.ts', 'db/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
  // Formatting: a line of code fits 160 characters. Comments, strings, template literals, URLs and regular
  // expressions are not counted (a sentence or a pattern is not cut for the ruler). eslint's core max-len: deprecated
  // in favour of @stylistic/max-len, still shipped by eslint 10.
  {
    files: ['src/**/*.{ts,js}', 'machines/**/*.ts', 'db/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'max-len': ['error', { code: 160, ignoreComments: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true }],
    },
  },
  {
    files: ['src/main.ts', 'src/cli.ts', 'src/cli/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
  // The statecharts are pure: their I/O comes as actors and policies from the runtime that runs them, so a machine
  // imports no I/O library, no database code, and nothing of the runtimes that import it (no arrow back up).
  {
    files: ['machines/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'A machine does no I/O: take it as an actor from the runtime.' },
            { group: ['kysely', 'pg', '@electric-sql/*', 'undici', 'ws', 'express'], message: 'A machine does no I/O: take it as an actor from the runtime.' },
            { group: ['**/db/**'], message: 'A machine does not read the database: take it as an actor from the runtime.' },
            { group: ['**/src/sessions/**', '**/src/webhooks/**', '**/src/channels/**', '**/src/http/**'], message: 'A runtime imports its machine, not the other way round: take it as input or an actor.' },
          ],
        },
      ],
    },
  },
  // The chat widget: a classic browser script (src/widget/widget.js); its console.warn tells a site owner what to fix.
  {
    files: ['src/widget/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', location: 'readonly', console: 'readonly', fetch: 'readonly', URL: 'readonly', URLSearchParams: 'readonly', setTimeout: 'readonly', CSSStyleSheet: 'readonly' },
    },
    rules: { 'no-console': ['error', { allow: ['warn'] }] },
  },
  // The dashboard (src/dashboard): browser ES modules, type-checked by tsc (checkJs), which also knows the browser's
  // globals, so no-undef (which does not) is left to it.
  {
    files: ['src/dashboard/**/*.js'],
    languageOptions: { sourceType: 'module' },
    rules: { 'no-undef': 'off' },
  },
);
