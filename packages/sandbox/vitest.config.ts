import { defineProject } from 'vitest/config';

export default defineProject({
  // Lets tests import workspace packages from src without building them first.
  ssr: { resolve: { conditions: ['@infinity-code/source'] } },
  test: {
    name: 'sandbox',
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'node',
    // Tests create real repositories, mounts and processes; a 2-core CI box needs the headroom.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
