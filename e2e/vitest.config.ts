import { defineProject } from 'vitest/config';

export default defineProject({
  ssr: { resolve: { conditions: ['@infinity-code/source'] } },
  // These run the built CLI (pnpm build first; `pnpm test` does).
  test: { name: 'e2e', include: ['**/*.test.ts'], exclude: ['node_modules/**'], environment: 'node', testTimeout: 120_000 },
});
