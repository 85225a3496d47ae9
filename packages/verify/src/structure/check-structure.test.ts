import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Diagnostic } from '@allium-loop/allium';
import { describe, expect, it } from 'vitest';
import { checkStructure, mergeDiagnostics } from './check-structure.js';

const fixtures = fileURLToPath(new URL('../reference-cli/fixtures/', import.meta.url));
const withFake = { PATH: `${join(fixtures, 'bin')}:${process.env['PATH'] ?? ''}` };

async function project(): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'verify-structure-'));
  await cp(join(fixtures, 'specs'), join(cwd, 'spec'), { recursive: true });
  await cp(join(fixtures, 'specs'), join(cwd, 'node_modules', 'dep'), { recursive: true });
  return cwd;
}

describe('checkStructure', () => {
  it('engine only: finds the specs (skipping node_modules), counts errors, warnings and open questions', async () => {
    const cwd = await project();
    const report = await checkStructure({ cwd, env: { PATH: '/nonexistent' } });
    expect(report.specFiles).toEqual([
      'spec/allium-check-reporting-behaviour.allium',
      'spec/v3-lifecycle.allium',
    ]);
    expect(report.reference.status).toBe('not_available');
    expect(report.diagnostics.every((diagnostic) => diagnostic.source === 'engine')).toBe(true);
    // The recorded reference reports 1 + 2 errors for these files; the engine's parser finds the same lines.
    expect(report.errors).toBe(3);
    expect(report.openQuestions).toEqual([
      {
        text: 'How should partial shipments interact with the transition graph?',
        location: { file: 'spec/v3-lifecycle.allium', line: 237, col: 1 },
      },
    ]);
  });

  it('with the reference CLI: merges, de-duplicates and marks the source', async () => {
    const cwd = await project();
    const report = await checkStructure({ cwd, env: withFake });
    expect(report.reference).toMatchObject({ status: 'ran', findings: 12, issues: [] });
    expect(report.errors).toBe(3);
    const errors = report.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    expect(errors.map((diagnostic) => diagnostic.source)).toEqual(['both', 'both', 'both']);
    // The engine now reports what the reference reports here, so the hint is found by both, once.
    const hints = report.diagnostics.filter(
      (diagnostic) => diagnostic.code === 'allium.externalEntity.missingSourceHint',
    );
    expect(hints.map((diagnostic) => diagnostic.source)).toEqual(['both']);
  });

  it('a project without specs has nothing to check', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'verify-structure-'));
    await writeFile(join(cwd, 'README.md'), '# x');
    const report = await checkStructure({ cwd, env: withFake });
    expect(report).toMatchObject({ specFiles: [], errors: 0, warnings: 0, openQuestions: [] });
    expect(report.reference).toEqual({ status: 'not_available', reason: 'no spec files' });
  });

  it('an open question inside a block is counted, and a suppression does not hide it', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'verify-structure-'));
    await writeFile(
      join(cwd, 'a.allium'),
      '-- allium: 3\n\n-- allium-ignore all\nopen question "Who approves refunds?"\n',
    );
    const report = await checkStructure({ cwd, useReference: false });
    expect(report.openQuestions.map((question) => question.text)).toEqual(['Who approves refunds?']);
  });
});

describe('mergeDiagnostics', () => {
  const at = (
    file: string,
    line: number,
    code: string | null,
    severity: Diagnostic['severity'],
  ): Diagnostic => ({
    code,
    severity,
    message: 'm',
    location: { file, line, col: 1 },
  });

  it('keys on file, line and code; keeps the stricter severity; normalises paths', () => {
    const merged = mergeDiagnostics(
      [at('a.allium', 3, 'allium.x', 'warning'), at('a.allium', 9, null, 'error')],
      [
        at('./a.allium', 3, 'allium.x', 'error'),
        at('/p/a.allium', 9, null, 'error'),
        at('a.allium', 4, 'allium.y', 'info'),
      ],
      '/p',
    );
    expect(merged.map((d) => [d.location.file, d.location.line, d.severity, d.source])).toEqual([
      ['a.allium', 3, 'error', 'both'],
      ['a.allium', 4, 'info', 'reference'],
      ['a.allium', 9, 'error', 'both'],
    ]);
  });
});
