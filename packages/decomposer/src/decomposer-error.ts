import { AlliumLoopError } from '@allium-loop/errors';

/**
 * A misuse of the decomposer's API. Codes: `decomposer.duplicateReport` (two reports for one slice),
 * `decomposer.unknownSlice` (a report for a slice the plan does not have). Not retryable.
 */
export class DecomposerError extends AlliumLoopError {}
