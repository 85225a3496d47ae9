import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    watch: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
