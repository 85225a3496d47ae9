import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../packages/allium/src/fixtures');
const SOURCES = ['v3-lifecycle', 'comprehensive-edge-cases', 'language-reference-constructs'];
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

/** The v3 fixtures' bodies (without the version header), concatenated. */
function unitText(): string {
  return SOURCES.map((name) =>
    readFileSync(join(FIXTURES, `${name}.allium`), 'utf8').replace(/^-- allium: 3\n/, ''),
  ).join('\n');
}

/**
 * A valid-looking v3 spec of about `lines` lines: copies of the v3 fixtures' constructs, each copy with every
 * PascalCase name (entities, rules, triggers, surfaces, values, enums) renamed `NameK<copy>`, so copies do not
 * collide and the graph grows with the spec instead of collapsing onto shared names.
 */
export function generateSpec(lines: number): string {
  const unit = unitText();
  const unitLines = unit.split('\n').length;
  const parts = ['-- allium: 3'];
  for (let copy = 0; parts.length * unitLines < lines + unitLines; copy += 1) {
    parts.push(
      unit.replace(/\b[A-Z][A-Za-z0-9]*\b/g, (name) => (BUILTINS.has(name) ? name : `${name}K${copy}`)),
    );
  }
  return parts.join('\n').split('\n').slice(0, lines).join('\n');
}
