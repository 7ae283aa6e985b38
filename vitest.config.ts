import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/runtime', 'packages/sandbox', 'packages/tools', 'packages/mcp', 'packages/cli', 'e2e'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
