import { AlliumLoopError } from '@allium-loop/errors';

/**
 * An error of the workers package itself (a missing template, a placeholder without a value) — never an agent's
 * failure, which is reported as a failed {@link WorkerOutcome} instead. Codes: `workers.template_missing`,
 * `workers.template_value_missing`.
 */
export class WorkerError extends AlliumLoopError {}
