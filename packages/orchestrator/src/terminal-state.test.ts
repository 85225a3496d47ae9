import { describe, expect, it } from 'vitest';
import { TERMINAL_EXIT_CODES } from './terminal-state.js';

describe('TERMINAL_EXIT_CODES', () => {
  it('gives every terminal state its own exit code, 0 only for converged and never the usage code 2', () => {
    const codes = Object.values(TERMINAL_EXIT_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    expect(TERMINAL_EXIT_CODES.converged).toBe(0);
    expect(codes.filter((code) => code === 0)).toHaveLength(1);
    expect(codes).not.toContain(2);
    expect(TERMINAL_EXIT_CODES.cancelled).toBe(130);
  });
});
