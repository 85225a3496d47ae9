import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The directory of the copied allium-tools fixtures (MIT, see fixtures/LICENSE-allium-tools). */
export const FIXTURE_DIR = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** Base names (without `.allium`) of every fixture spec. */
export function fixtureNames(): string[] {
  return readdirSync(FIXTURE_DIR)
    .filter((file) => file.endsWith('.allium'))
    .map((file) => file.slice(0, -'.allium'.length))
    .sort();
}

/** The three current-syntax fixtures the parity tests hold to the reference exactly. */
export const V3_FIXTURES = [
  'v3-lifecycle',
  'comprehensive-edge-cases',
  'language-reference-constructs',
] as const;

/** The source text of a fixture. */
export function readFixture(name: string): string {
  return readFileSync(join(FIXTURE_DIR, `${name}.allium`), 'utf8');
}

/** A reference CLI output (`check`, `model`, `plan`) for a fixture, parsed. */
export function readReference(name: string, command: 'check' | 'model' | 'plan'): unknown {
  return JSON.parse(readFileSync(join(FIXTURE_DIR, 'reference', `${name}.${command}.json`), 'utf8'));
}

/** One diagnostic as the reference prints it. */
export interface ReferenceDiagnostic {
  code: string | null;
  severity: 'error' | 'warning' | 'info';
  message: string;
  location: { file: string; line: number; col: number };
}

/** The reference `check` diagnostics of a fixture. */
export function referenceDiagnostics(name: string): ReferenceDiagnostic[] {
  return (readReference(name, 'check') as { diagnostics: ReferenceDiagnostic[] }).diagnostics;
}
