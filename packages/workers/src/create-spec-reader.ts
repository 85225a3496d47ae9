import { analyzeSpecs, buildPlan, diffInventory, type Inventory } from '@allium-loop/allium';
import type { ConstructDiff, SpecReader, SpecReading, SpecSource } from './worker-ports.js';

// Each reading remembers the spec package's own inventory, so diffs are the spec package's diffs.
const inventories = new WeakMap<SpecReading, Inventory>();

function read(sources: readonly SpecSource[]): SpecReading {
  const analysis = analyzeSpecs(sources);
  const reading: SpecReading = {
    diagnostics: analysis.diagnostics,
    openQuestions: analysis.openQuestions.map((q) => ({
      text: q.text,
      file: q.location.file,
      line: q.location.line,
    })),
    constructs: new Map(analysis.inventory.constructs.map((c) => [c.id, c.fingerprint])),
    graph: analysis.graph,
    obligations: analysis.specs.flatMap((spec) =>
      buildPlan(spec).obligations.map((o) => ({ id: o.id, source_construct: o.source_construct })),
    ),
  };
  inventories.set(reading, analysis.inventory);
  return reading;
}

function asInventory(reading: SpecReading): Inventory {
  const known = inventories.get(reading);
  if (known !== undefined) return known;
  const at = { file: '', line: 1, col: 1 };
  const constructs = [...reading.constructs].map(([id, fingerprint]) => {
    const kind = id.slice(0, id.indexOf(':')) as Inventory['constructs'][number]['kind'];
    return { id, kind, name: id.slice(id.indexOf(':') + 1), location: at, fingerprint };
  });
  return { constructs };
}

function diff(before: SpecReading, after: SpecReading): ConstructDiff {
  const changes = diffInventory(asInventory(before), asInventory(after));
  const ids = (list: readonly { readonly id: string }[]) => list.map((c) => c.id);
  return { added: ids(changes.added), removed: ids(changes.removed), changed: ids(changes.changed) };
}

/**
 * The {@link SpecReader} over `@allium-loop/allium`: `analyzeSpecs` for diagnostics (parse and structural, with
 * suppressions applied), open questions, the construct inventory and the dependency graph, `buildPlan` for the
 * test obligations; `diffInventory` for
 * what a phase added, removed or changed. Pure.
 */
export function createSpecReader(): SpecReader {
  return { read, diff };
}
