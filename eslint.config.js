// Lint: typescript-eslint's recommended rules plus the project's own habits (type-only imports, no console in src).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'bench/results/', 'coverage/'] },
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
  {
    files: ['src/main.ts', 'src/cli.ts'],
    rules: { 'no-console': 'off' },
  },
  // The chat widget: a classic browser script (src/widget/widget.js); its console.warn tells a site owner what to fix.
  {
    files: ['src/widget/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { window: 'readonly', document: 'readonly', location: 'readonly', console: 'readonly', fetch: 'readonly', URL: 'readonly', CSSStyleSheet: 'readonly' },
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
