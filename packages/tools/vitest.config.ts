import { defineProject } from 'vitest/config';

export default defineProject({
  // Lets tests import workspace packages from src without building them first.
  ssr: { resolve: { conditions: ['@infinity-code/source'] } },
  test: { name: 'tools', include: ['src/**/*.test.{ts,tsx}'], environment: 'node', testTimeout: 60_000, hookTimeout: 60_000 },
});
