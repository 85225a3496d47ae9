/**
 * @allium-loop/verify — the verification harness: the engine runs the tests and checks the spec itself.
 */
export type { TestCase, TestCommand, TestRunResult } from './test-run.js';
