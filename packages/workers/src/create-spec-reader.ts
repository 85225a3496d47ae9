import { checkSpecs, parseSpec, type Declaration, type ParsedSpec } from '@allium-loop/spec';
import type { ConstructDiff, SpecOpenQuestion, SpecReader, SpecReading, SpecSource } from './worker-ports.js';

function linesOf(spec: ParsedSpec, from: number, to: number): string {
  return spec.source
    .split('\n')
    .slice(from - 1, to)
    .map((l) => l.trim())
    .join('\n');
}

function declarationConstructs(spec: ParsedSpec, declaration: Declaration): [string, string][] {
  if (declaration.kind === 'variant') {
    return [
      [`variant:${declaration.name.name}`, linesOf(spec, declaration.location.line, declaration.endLine)],
    ];
  }
  if (declaration.kind === 'invariant') {
    return [
      [`invariant:${declaration.name.name}`, spec.source.slice(declaration.body.start, declaration.body.end)],
    ];
  }
  if (declaration.kind !== 'block' || declaration.name === undefined) return [];
  const kind = declaration.block === 'external entity' ? 'entity' : declaration.block;
  const name = declaration.name.name;
  const own: [string, string] = [
    `${kind}:${name}`,
    linesOf(spec, declaration.location.line, declaration.endLine),
  ];
  if (kind !== 'entity' && kind !== 'value') return [own];
  const fields = declaration.items.flatMap((item): [string, string][] =>
    item.kind === 'field'
      ? [[`field:${name}.${item.name.name}`, spec.source.slice(item.value.start, item.value.end)]]
      : [],
  );
  return [own, ...fields];
}

function openQuestions(spec: ParsedSpec): SpecOpenQuestion[] {
  const found: SpecOpenQuestion[] = [];
  const visit = (text: string, line: number) => found.push({ text, file: spec.file, line });
  for (const declaration of spec.declarations) {
    if (declaration.kind === 'open-question') visit(declaration.text, declaration.location.line);
    if (declaration.kind === 'block' || declaration.kind === 'variant') {
      for (const item of declaration.items)
        if (item.kind === 'open-question') visit(item.text, item.location.line);
    }
  }
  return found;
}

function read(sources: readonly SpecSource[]): SpecReading {
  const parsed = sources.map((s) => parseSpec(s.text, s.path));
  const constructs = new Map<string, string>();
  for (const spec of parsed) {
    for (const declaration of spec.declarations) {
      for (const [id, fingerprint] of declarationConstructs(spec, declaration))
        constructs.set(id, fingerprint);
    }
  }
  return {
    diagnostics: parsed.length === 0 ? [] : checkSpecs(parsed),
    openQuestions: parsed.flatMap(openQuestions),
    constructs,
    graph: { nodes: [], edges: [] },
  };
}

function diff(before: SpecReading, after: SpecReading): ConstructDiff {
  const added = [...after.constructs.keys()].filter((id) => !before.constructs.has(id));
  const removed = [...before.constructs.keys()].filter((id) => !after.constructs.has(id));
  const changed = [...after.constructs].filter(
    ([id, f]) => before.constructs.has(id) && before.constructs.get(id) !== f,
  );
  return { added: added.sort(), removed: removed.sort(), changed: changed.map(([id]) => id).sort() };
}

/**
 * The {@link SpecReader} over `@allium-loop/spec`: `parseSpec` + `checkSpecs` for diagnostics, the parsed
 * declarations for open questions and construct ids (`rule:`, `entity:`, `field:Entity.f`, `surface:`, `enum:`,
 * `value:`, `actor:`, `contract:`, `variant:`, `invariant:`), each fingerprinted by its source text so the diff
 * also reports changed constructs. The dependency graph stays empty until the spec package exports its graph
 * builder; slices then quote only their own constructs (and what they name), not their neighbours.
 */
export function createSpecReader(): SpecReader {
  return { read, diff };
}
