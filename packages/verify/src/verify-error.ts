import { AlliumLoopError } from '@allium-loop/errors';

/**
 * An error of the verification harness. Codes: `verify.no_test_command` (discovery found nothing),
 * `verify.config_invalid` (allium-loop.yaml cannot be read or written), `verify.spawn_failed` (the test command
 * could not start).
 */
export class VerifyError extends AlliumLoopError {}
