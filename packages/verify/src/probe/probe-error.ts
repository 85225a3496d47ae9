import { AlliumLoopError } from '@allium-loop/errors';

/** The project probe could not read the project root (code `verify.probe_failed`). Not retryable. */
export class ProbeError extends AlliumLoopError {}
