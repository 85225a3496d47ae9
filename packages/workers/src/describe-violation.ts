import type { GuardViolation } from './detect-violations.js';

/** One line for the journal and the terminal describing a guard violation. */
export function describeViolation(violation: GuardViolation): string {
  switch (violation.kind) {
    case 'protected_test_changed':
      return `generated test ${violation.path} was ${violation.deleted ? 'deleted' : 'edited'}`;
    case 'test_file_deleted':
      return `test file ${violation.path} was deleted`;
    case 'spec_edited_out_of_phase':
      return `${violation.path} was changed by a phase that may not edit the spec`;
    case 'test_markers_rose':
      return `${violation.path}: .${violation.marker} markers rose from ${violation.before} to ${violation.after}`;
    case 'spec_construct_removed':
      return `${violation.construct} was removed from the spec without a tend request naming it`;
    case 'test_weakened':
      return `${violation.path}: ${violation.measure === 'cases' ? 'test declarations' : 'non-trivial assertions'} fell from ${String(violation.before)} to ${String(violation.after)}`;
    case 'lint_suppression_added':
      return `${violation.path}: lint/type/coverage suppressions rose from ${String(violation.before)} to ${String(violation.after)}`;
    case 'harness_changed':
      return `${violation.label} changed since the run started (${violation.why})`;
    case 'suppression_added':
      return `${violation.path}:${violation.line}: new -- allium-ignore ${violation.codes.join(', ') || '(no codes)'}`;
  }
}
