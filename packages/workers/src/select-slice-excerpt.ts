import type { DependencyGraph } from '@allium-loop/allium';
import { splitDeclarations, type SpecDeclaration } from './split-declarations.js';
import type { SpecSource } from './worker-ports.js';

/** The part of the work a worker is given: a named set of construct ids (`rule:Name`, `entity:Name`, …). */
export interface SliceSelection {
  readonly name: string;
  readonly constructs: readonly string[];
}

/** The spec text a prompt quotes, and which constructs it carries. */
export interface SpecExcerpt {
  readonly text: string;
  /** Ids of the slice's own constructs found in the spec. */
  readonly sliceConstructs: readonly string[];
  /** Ids of direct graph neighbours quoted for context. */
  readonly neighbours: readonly string[];
}

/** Declarations quoted with every slice: they are small and carry values the agent must honour. */
const ALWAYS_QUOTED = new Set(['config', 'given', 'default', 'use']);
/** Declarations quoted when the slice's text mentions them by name. */
const QUOTED_WHEN_MENTIONED = new Set([
  'enum',
  'value',
  'actor',
  'variant',
  'contract',
  'deferred',
  'invariant',
]);

/** Ids adjacent to the slice in the dependency graph, in either direction, excluding the slice itself. */
export function directNeighbours(graph: DependencyGraph, constructs: readonly string[]): string[] {
  const inSlice = new Set(constructs);
  const found = new Set<string>();
  for (const edge of graph.edges) {
    if (inSlice.has(edge.from) && !inSlice.has(edge.to)) found.add(edge.to);
    if (inSlice.has(edge.to) && !inSlice.has(edge.from)) found.add(edge.from);
  }
  return [...found].sort();
}

function pickDeclarations(
  declarations: readonly SpecDeclaration[],
  wanted: ReadonlySet<string>,
): SpecDeclaration[] {
  const core = declarations.filter((d) => wanted.has(d.id));
  const named = new Set(core.flatMap((d) => d.text.match(/[A-Za-z_]\w*/g) ?? []));
  const isMentioned = (d: SpecDeclaration) =>
    named.has(d.kind === 'deferred' ? (d.name.split('.')[0] ?? '') : d.name);
  return declarations.filter(
    (d) =>
      wanted.has(d.id) || ALWAYS_QUOTED.has(d.kind) || (QUOTED_WHEN_MENTIONED.has(d.kind) && isMentioned(d)),
  );
}

function renderFile(source: SpecSource, blocks: readonly string[]): string {
  return [`=== ${source.path}`, ...blocks].join('\n\n');
}

/**
 * The spec text a worker sees. Without a slice: every file whole. With a slice: per file, the version header,
 * the slice's constructs, their direct neighbours in the dependency graph, the `config`/`given`/`default`/`use`
 * blocks, and the enums, values, actors, variants, contracts, invariants and deferrals the quoted text names —
 * nothing else, so a prompt for one slice of a large spec stays small. Files with nothing to quote are left out.
 */
export function selectSliceExcerpt(
  sources: readonly SpecSource[],
  graph: DependencyGraph,
  slice?: SliceSelection,
): SpecExcerpt {
  if (slice === undefined) {
    return {
      text: sources.map((s) => renderFile(s, [s.text.trimEnd()])).join('\n\n'),
      sliceConstructs: [],
      neighbours: [],
    };
  }
  const neighbours = directNeighbours(graph, slice.constructs);
  const wanted = new Set([...slice.constructs, ...neighbours]);
  const seen = new Set<string>();
  const files: string[] = [];
  for (const source of sources) {
    const split = splitDeclarations(source.text);
    const picked = pickDeclarations(split.declarations, wanted);
    picked.forEach((d) => seen.add(d.id));
    if (!picked.some((d) => wanted.has(d.id))) continue;
    const blocks = [split.preamble, ...picked.map((d) => d.text)].filter((b) => b !== '');
    files.push(renderFile(source, blocks));
  }
  return {
    text: files.join('\n\n'),
    sliceConstructs: slice.constructs.filter((id) => seen.has(id)),
    neighbours: neighbours.filter((id) => seen.has(id)),
  };
}
