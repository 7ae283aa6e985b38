import { defineProject } from 'vitest/config';

export default defineProject({
  // Lets tests import workspace packages from src without building them first.
  ssr: { resolve: { conditions: ['@infinity-code/source'] } },
  test: { name: 'mcp', include: ['src/**/*.test.ts'], environment: 'node', testTimeout: 60_000, hookTimeout: 60_000 },
});
