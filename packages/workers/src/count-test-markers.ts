/** How many tests a file switches off or focuses, by marker. */
export interface TestMarkerCounts {
  readonly skip: number;
  readonly only: number;
  readonly todo: number;
}

const TEST_FNS = '(?:it|test|describe|suite|context|specify|bench)';
const PATTERNS: Record<keyof TestMarkerCounts, readonly RegExp[]> = {
  skip: [
    new RegExp(`\\b${TEST_FNS}\\.(?:skip|skipIf|fixme)\\b`, 'g'),
    /\bx(?:it|describe|test|context|specify)\s*\(/g,
    /@pytest\.mark\.(?:skip|skipif|xfail)\b/g,
    /@unittest\.skip\w*/g,
    /\bt\.Skip(?:Now|f)?\s*\(/g,
  ],
  only: [new RegExp(`\\b${TEST_FNS}\\.only\\b`, 'g'), /\bf(?:it|describe)\s*\(/g],
  todo: [new RegExp(`\\b${TEST_FNS}\\.todo\\b`, 'g')],
};

function countMatches(text: string, patterns: readonly RegExp[]): number {
  return patterns.reduce((sum, pattern) => sum + (text.match(pattern)?.length ?? 0), 0);
}

/**
 * Counts the markers that switch tests off (`.skip`, `xit`, `@pytest.mark.skip`, `t.Skip`), focus them (`.only`,
 * `fit`) or leave them unwritten (`.todo`) in a test file's text. A textual count: it does not parse the
 * language, and it is only ever compared with the same file's earlier count.
 */
export function countTestMarkers(text: string): TestMarkerCounts {
  return {
    skip: countMatches(text, PATTERNS.skip),
    only: countMatches(text, PATTERNS.only),
    todo: countMatches(text, PATTERNS.todo),
  };
}
