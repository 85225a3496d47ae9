export { budgetStop, callFitsBudget, decide, routeAfter, type Decision } from './decide.js';
export type {
  LoopAction,
  LoopEvent,
  LoopMeter,
  LoopObservation,
  PhaseFocus,
  SliceFocus,
} from './loop-action.js';
export {
  DEFAULT_CAPS,
  initialLoopState,
  type Divergence,
  type LoopCaps,
  type LoopConfig,
  type LoopMode,
  type LoopPhase,
  type LoopState,
  type Route,
  type Stage,
  type TickVerdict,
} from './loop-state.js';
