import { INTEGRATION_ID } from '@allium-loop/decomposer';
import type { HistoryEntry, JournalEvent, Ledger, SubGoal } from '@allium-loop/ledger';
import type { SliceFocus } from '../decide/loop-action.js';
import type { LoopConfig } from '../decide/loop-state.js';
import { readLoopState } from '../driver/ledger-sync.js';
import type { StoredPlan, StoredSlice } from './stored-plan.js';

/** The `history` kind that marks a ledger as one slice of a stored plan (`run --slice <id> --plan <file>`). */
export const SLICE_RUN_KIND = 'scale_out.slice';

/** What a slice run records about itself: the plan it belongs to and the slice it runs. */
export interface SliceRunMark {
  readonly plan: string;
  readonly slice: SliceFocus;
  readonly base: string | null;
}

/** The history entry and the sub-goal a slice run's new ledger starts with. */
export function sliceRunRecord(
  plan: StoredPlan,
  slice: StoredSlice,
  at: Date,
): { history: HistoryEntry; subGoal: SubGoal } {
  return {
    history: {
      at: at.toISOString(),
      kind: SLICE_RUN_KIND,
      message: `slice ${slice.id} (wave ${String(slice.wave)}) of plan ${plan.id}`,
      data: {
        plan: plan.id,
        base: plan.base,
        slice: {
          id: slice.id,
          constructs: [...slice.constructs],
          integration: slice.id === INTEGRATION_ID,
          ...(slice.chains === undefined ? {} : { chains: slice.chains.map((chain) => [...chain]) }),
        },
      },
    },
    subGoal: {
      id: slice.id,
      slice: { constructs: [...slice.constructs] },
      dependsOn: [...slice.dependsOn],
      status: 'pending',
      report: null,
    },
  };
}

/** The slice a ledger runs when it was started by `run --slice`; `undefined` for any other run. */
export function sliceRunMark(ledger: Ledger): SliceRunMark | undefined {
  const entry = ledger.history.find((h) => h.kind === SLICE_RUN_KIND);
  const data = entry?.data;
  if (data === undefined) return undefined;
  const slice = data['slice'] as
    { id?: unknown; constructs?: unknown; integration?: unknown; chains?: unknown } | undefined;
  if (typeof data['plan'] !== 'string' || typeof slice?.id !== 'string' || !Array.isArray(slice.constructs))
    return undefined;
  return {
    plan: data['plan'],
    base: typeof data['base'] === 'string' ? data['base'] : null,
    slice: {
      id: slice.id,
      constructs: slice.constructs.filter((c): c is string => typeof c === 'string'),
      integration: slice.integration === true,
      ...(Array.isArray(slice.chains) ? { chains: slice.chains as string[][] } : {}),
    },
  };
}

/** The loop config of one slice: it starts with propagate on the slice's constructs, and never splits again. */
export function sliceLoopConfig(config: LoopConfig): LoopConfig {
  return { ...config, entry: 'weed', decompose: false, startWithPropagate: true };
}

/**
 * Ends a slice run's ledger with its slice loop's outcome: the run is terminal in the slice's terminal state, so
 * `list`, `status` and the exit code say how the slice ended. Pure; returns the journal event to append too.
 */
export function endSliceRun(
  ledger: Ledger,
  sliceId: string,
  at: Date,
): { ledger: Ledger; event: JournalEvent } | undefined {
  const state = readLoopState(ledger, sliceId);
  const terminal = state?.terminal;
  if (state === undefined || terminal === undefined) return undefined;
  const stamp = at.toISOString();
  return {
    ledger: {
      ...ledger,
      tick: state.tick,
      updatedAt: stamp,
      status: 'terminal',
      terminal: {
        state: terminal.state,
        reason: terminal.state,
        detail: `slice ${sliceId}: ${terminal.reason}`,
        at: stamp,
      },
      spent: { ...ledger.spent, ticks: state.verdicts.length },
    },
    event: {
      type: 'terminal',
      at: stamp,
      tick: state.tick,
      state: terminal.state,
      reason: terminal.state,
      detail: `slice ${sliceId}: ${terminal.reason}`,
    },
  };
}
