export { AlliumLoopError, formatError, type AlliumLoopErrorOptions } from './allium-loop-error.js';
export { err, ok, type Err, type Ok, type Result } from './result.js';
