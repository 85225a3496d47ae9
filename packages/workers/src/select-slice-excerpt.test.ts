import { describe, expect, it } from 'vitest';
import { createSpecReader } from './create-spec-reader.js';
import { directNeighbours, selectSliceExcerpt } from './select-slice-excerpt.js';
import { chainSpec } from './spec-fixtures.test-helpers.js';

describe('selectSliceExcerpt', () => {
  const { sources, graph, slices } = chainSpec(10);

  it('quotes the whole spec when there is no slice', () => {
    const whole = selectSliceExcerpt(sources, graph);
    expect(whole.text).toContain(sources[0]!.text.trimEnd());
  });

  it("quotes one slice's constructs and direct neighbours, and nothing from other slices", () => {
    const excerpt = selectSliceExcerpt(sources, graph, slices[3]!);
    expect(excerpt.sliceConstructs).toEqual(['rule:Finish3']);
    expect(excerpt.neighbours).toEqual(['entity:Thing3', 'rule:Announce3', 'surface:Panel3']);
    for (const name of ['rule Finish3', 'rule Announce3', 'entity Thing3', 'surface Panel3', 'enum Size3']) {
      expect(excerpt.text).toContain(name);
    }
    expect(excerpt.text).toContain('-- allium: 3');
    expect(excerpt.text).toContain('batch: Integer = 10');
    // Note3 is two hops away (Finish3 → Announce3 → Note3): not a direct neighbour.
    expect(excerpt.text).not.toContain('entity Note3');
    expect(excerpt.text).not.toMatch(/\b(Finish|Announce|Thing|Panel|Size|Note)(?!3\b)\d+\b/);
  });

  it('finds neighbours in both directions of an edge', () => {
    expect(directNeighbours(graph, ['entity:Thing0'])).toEqual(['rule:Finish0']);
  });

  it('slices the same way with the graph the spec package builds', () => {
    const realGraph = createSpecReader().read(sources).graph;
    const real = selectSliceExcerpt(sources, realGraph, slices[7]!);
    expect(real).toEqual(selectSliceExcerpt(sources, graph, slices[7]!));
  });
});
