import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    // The run's own temporary directory (tools/vitest/temp-dir.mjs), then the CLI the end-to-end tests start as a
    // child process, bundled once per run from the current sources (into that directory).
    globalSetup: ['../../tools/vitest/temp-dir.mjs', 'src/cli-bundle.test-helpers.ts'],
    watch: false,
    // The end-to-end files mostly wait on child processes, so three run side by side even on two cores.
    maxWorkers: 3,
    // End-to-end runs start several CLI processes each; a slow shared machine must not fail them.
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
