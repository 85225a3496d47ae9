/**
 * @allium-loop/orchestrator — the tick: a pure `decide(state, observation)` and the driver that carries it out.
 */
export { TERMINAL_EXIT_CODES, type TerminalState } from './terminal-state.js';
