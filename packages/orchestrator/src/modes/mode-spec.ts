import type { Ledger, ModeSpec } from '@allium-loop/ledger';
import type { ModeContext } from './mode-context.js';
import { formatStateFileSummary, runStateFileMode } from './state-file-mode.js';
import { formatStorySummary } from './story-report.js';
import { runStoryMode } from './story-mode.js';
import { formatVerifySummary } from './verify-report.js';
import { runVerifyMode } from './verify-mode.js';

/** Which mode runs, its configuration and default caps, as stored in the ledger (`modeState.run.spec`). */
export type { ModeSpec } from '@allium-loop/ledger';

/** Runs the loop of the mode `spec` names until a terminal state; returns the final ledger. */
export async function runModeLoop(context: ModeContext, spec: ModeSpec): Promise<Ledger> {
  switch (spec.mode) {
    case 'verify':
      return runVerifyMode(context, spec.config);
    case 'stories':
      return runStoryMode(context, spec.config);
    case 'state-file':
      return runStateFileMode(context, spec.config);
  }
}

/** The summary table of a mode run, read from its ledger; empty for a run with no mode state. */
export function summarizeMode(ledger: Ledger): string {
  const record = ledger.modeState;
  switch (record.kind) {
    case 'verify':
      return record.verify === undefined ? '' : formatVerifySummary(record.verify);
    case 'stories':
      return record.stories === undefined ? '' : formatStorySummary(record.stories);
    case 'state-file':
      return record['state-file'] === undefined ? '' : formatStateFileSummary(record['state-file']);
    case 'spec':
      return '';
  }
}
