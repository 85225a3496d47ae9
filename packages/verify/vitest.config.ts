import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    // The run's temporary files in a directory of its own, removed at the end (tools/vitest/temp-dir.mjs).
    globalSetup: ['../../tools/vitest/temp-dir.mjs'],
    watch: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
