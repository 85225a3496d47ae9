import { describe, expect, it } from 'vitest';
import { splitDeclarations } from './split-declarations.js';
import { TOOL_LIBRARY_SPEC } from './spec-fixtures.test-helpers.js';

describe('splitDeclarations', () => {
  const split = splitDeclarations(TOOL_LIBRARY_SPEC);

  it('keeps the version header and scope comments in the preamble', () => {
    expect(split.preamble).toBe('-- allium: 3\n-- Scope: tool library lending (test fixture)');
  });

  it('names every top-level declaration with the graph id form', () => {
    expect(split.declarations.map((d) => d.id)).toEqual([
      'entity:Member',
      'enum:Condition',
      'entity:Tool',
      'entity:Borrowing',
      'config',
      'rule:Borrow',
      'rule:GiveBack',
      'surface:Desk',
      'open question',
    ]);
  });

  it('attaches the comment above a declaration to it and records its lines', () => {
    const tool = split.declarations.find((d) => d.id === 'entity:Tool')!;
    expect(tool.text.startsWith('-- A tool on the shelf')).toBe(true);
    expect(tool.text.endsWith('}')).toBe(true);
    expect(TOOL_LIBRARY_SPEC.split('\n')[tool.startLine - 1]).toBe(
      '-- A tool on the shelf or out with a member.',
    );
    expect(TOOL_LIBRARY_SPEC.split('\n')[tool.endLine - 1]).toBe('}');
  });

  it('never fails on text that is not a spec', () => {
    expect(splitDeclarations('garbage here {\n  nonsense {').declarations.map((d) => d.id)).toEqual([
      'unknown',
    ]);
    expect(splitDeclarations('}}}\n  nonsense {').declarations).toEqual([]);
    expect(splitDeclarations('')).toEqual({ preamble: '', declarations: [] });
  });
});
