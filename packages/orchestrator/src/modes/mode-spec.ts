import type { Caps, Ledger } from '@allium-loop/ledger';
import type { ModeContext } from './mode-context.js';
import {
  formatStateFileSummary,
  runStateFileMode,
  type StateFileModeConfig,
  type StateFileModeState,
} from './state-file-mode.js';
import { formatStorySummary } from './story-report.js';
import { runStoryMode, type StoryModeConfig, type StoryModeState } from './story-mode.js';
import { formatVerifySummary } from './verify-report.js';
import { runVerifyMode, type VerifyModeConfig, type VerifyModeState } from './verify-mode.js';

/** Which mode runs and its configuration, as stored in the ledger (`modeState.run.spec`). */
export type ModeSpec = (
  | { readonly mode: 'verify'; readonly config: VerifyModeConfig }
  | { readonly mode: 'stories'; readonly config: StoryModeConfig }
  | { readonly mode: 'state-file'; readonly config: StateFileModeConfig }
) & {
  /** Caps this mode uses unless the user set them. */
  readonly defaultCaps: Partial<Caps>;
};

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
  const state = ledger.modeState[ledger.mode];
  if (state === undefined || state === null) return '';
  switch (ledger.mode) {
    case 'verify':
      return formatVerifySummary(state as unknown as VerifyModeState);
    case 'stories':
      return formatStorySummary(state as unknown as StoryModeState);
    case 'state-file':
      return formatStateFileSummary(state as unknown as StateFileModeState);
    case 'spec':
      return '';
  }
}
