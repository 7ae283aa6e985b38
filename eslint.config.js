// Lint with typescript-eslint's recommended type-checked rules over every TypeScript file the
// build or the tests compile; `pnpm test` runs it before the tests.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/*.js', '**/*.mjs', '**/*.cjs', 'packages/*/vitest.config.ts', 'vitest.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        project: ['./packages/*/tsconfig.json', './tsconfig.tests.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_name` marks a binding kept for its position (a destructured rest, a callback's arity).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      // A switch over a union without a default names every member: a new runtime event (or any
      // new member) is a decision in each consumer, not a silent fall-through. A default is a
      // deliberate catch-all.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: ['**/*.test.ts', '**/*.test.tsx', '**/test-support/**', 'packages/cli/src/tui/testing.tsx', 'e2e/**', 'bench/**'],
    rules: {
      // vitest's asymmetric matchers (expect.any, expect.objectContaining, ...) are typed `any`
      // by design; every use is an assertion, not data flowing on.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      // Test doubles implement async interfaces with answers they already have.
      '@typescript-eslint/require-await': 'off',
      // expect(obj.method).toHaveBeenCalled… and handing methods to test drivers is how tests read.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
