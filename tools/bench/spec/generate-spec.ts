import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../packages/allium/src/fixtures');

/**
 * What a generated spec is made of: copies of these fixtures' bodies under one version header. `v3` is the mix every
 * benchmark here has always used (and the one the figures in docs/ are for); the others exist because the reference's
 * speed depends a great deal on what a spec holds (its time per line differs by 3× between them) while ours hardly
 * does, so one mix alone says little about "faster than the reference" (mixes.bench.ts).
 */
export interface SpecMix {
  readonly name: string;
  readonly version: 1 | 3;
  readonly sources: readonly string[];
}

/** The allium-tools behaviour specs among the fixtures (all `-- allium: 1`). */
const BEHAVIOUR_FIXTURES = readdirSync(FIXTURES)
  .filter((file) => file.startsWith('allium-') && file.endsWith('-behaviour.allium'))
  .map((file) => file.slice(0, -'.allium'.length))
  .sort();

export const SPEC_MIXES: readonly SpecMix[] = [
  {
    name: 'v3',
    version: 3,
    sources: ['v3-lifecycle', 'comprehensive-edge-cases', 'language-reference-constructs'],
  },
  { name: 'v3-lifecycle', version: 3, sources: ['v3-lifecycle'] },
  { name: 'edge-cases', version: 3, sources: ['comprehensive-edge-cases'] },
  { name: 'language-reference', version: 3, sources: ['language-reference-constructs'] },
  { name: 'behaviour', version: 1, sources: BEHAVIOUR_FIXTURES },
];
const DEFAULT_MIX = SPEC_MIXES[0] as SpecMix;
const BUILTINS = new Set([
  'String',
  'Integer',
  'Decimal',
  'Boolean',
  'Timestamp',
  'Duration',
  'List',
  'Set',
  'Map',
  'Any',
  'Void',
]);

/** The mix's fixtures' bodies (without their version header), concatenated. */
function unitText(mix: SpecMix): string {
  return mix.sources
    .map((name) => readFileSync(join(FIXTURES, `${name}.allium`), 'utf8').replace(/^-- allium: \d+\n/, ''))
    .join('\n');
}

/**
 * A valid-looking spec of about `lines` lines: copies of the mix's fixtures (by default the three v3 ones), each
 * copy with every PascalCase name (entities, rules, triggers, surfaces, values, enums) renamed `NameK<copy>`, so
 * copies do not collide and the graph grows with the spec instead of collapsing onto shared names.
 */
export function generateSpec(lines: number, mix: SpecMix = DEFAULT_MIX): string {
  const unit = unitText(mix);
  const unitLines = unit.split('\n').length;
  const parts = [`-- allium: ${mix.version}`];
  for (let copy = 0; parts.length * unitLines < lines + unitLines; copy += 1) {
    parts.push(
      unit.replace(/\b[A-Z][A-Za-z0-9]*\b/g, (name) => (BUILTINS.has(name) ? name : `${name}K${copy}`)),
    );
  }
  return parts.join('\n').split('\n').slice(0, lines).join('\n');
}
