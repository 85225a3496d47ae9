import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findAllium } from './find-allium.js';
import { runReferenceCheck, runReferenceDocument } from './run-reference-cli.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const fakeBin = join(fixtures, 'bin');
const env = (extra: Record<string, string> = {}) => ({
  PATH: `${fakeBin}:${process.env['PATH'] ?? ''}`,
  ...extra,
});

describe('findAllium', () => {
  it('finds the executable on PATH, and nothing on a PATH without it', async () => {
    expect(await findAllium(env())).toBe(join(fakeBin, 'allium'));
    expect(await findAllium({ PATH: await mkdtemp(join(tmpdir(), 'no-allium-')) })).toBeUndefined();
    expect(await findAllium({})).toBeUndefined();
  });
});

describe('runReferenceCheck against the fake allium', () => {
  it('is "not available", not an error, when allium is absent', async () => {
    const result = await runReferenceCheck('check', ['specs'], {
      cwd: fixtures,
      env: { PATH: '/nonexistent' },
    });
    expect(result.available).toBe(false);
    if (!result.available) expect(result.reason).toContain('not on PATH');
  });

  it('reads one report per file from the concatenated documents of a whole directory', async () => {
    const result = await runReferenceCheck('check', ['specs'], { cwd: fixtures, env: env() });
    if (!result.available) throw new Error('expected the fake allium');
    expect(result.issues).toEqual([]);
    expect(result.exitCode).toBe(1);
    expect(result.reports.map((report) => report.specFile)).toEqual([
      'specs/allium-check-reporting-behaviour.allium',
      'specs/v3-lifecycle.allium',
    ]);
    const errors = result.reports
      .flatMap((report) => report.diagnostics)
      .filter((d) => d.severity === 'error');
    // Recorded reference: 1 error in the first file, 2 in the second (reference/index.json).
    expect(errors).toHaveLength(3);
    expect(errors[0]!.location.file).toBe('specs/allium-check-reporting-behaviour.allium');
  });

  it('reads analyse findings', async () => {
    const result = await runReferenceCheck('analyse', ['specs/v3-lifecycle.allium'], {
      cwd: fixtures,
      env: env(),
    });
    if (!result.available) throw new Error('expected the fake allium');
    expect(result.reports).toHaveLength(1);
    expect(result.reports[0]!.findings.map((finding) => finding.type)).toContain('conflict');
  });

  it('reports truncated output as an issue, keeping the documents it could read', async () => {
    const result = await runReferenceCheck('check', ['specs'], {
      cwd: fixtures,
      env: env({ FAKE_ALLIUM_TRUNCATE: '1' }),
    });
    if (!result.available) throw new Error('expected the fake allium');
    expect(result.reports).toHaveLength(1);
    expect(result.issues[0]).toMatch(/^unreadable output: \{/);
  });

  it('reports "no files" (exit 2, nothing on stdout) as an issue', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'no-specs-'));
    const result = await runReferenceCheck('check', [empty], { cwd: fixtures, env: env() });
    if (!result.available) throw new Error('expected the fake allium');
    expect(result.exitCode).toBe(2);
    expect(result.reports).toEqual([]);
    expect(result.issues).toEqual(['stderr: error: no .allium files found']);
  });
});

describe('runReferenceDocument against the fake allium', () => {
  it.each(['plan', 'model'] as const)('%s returns the document of one file', async (command) => {
    const result = await runReferenceDocument(command, 'specs/v3-lifecycle.allium', {
      cwd: fixtures,
      env: env(),
    });
    if (!result.available) throw new Error('expected the fake allium');
    expect(result.issues).toEqual([]);
    expect(result.document).toHaveProperty(command === 'plan' ? 'obligations' : 'entities');
  });

  it('is "not available" without the binary', async () => {
    const result = await runReferenceDocument('model', 'specs/v3-lifecycle.allium', {
      cwd: fixtures,
      env: { PATH: '' },
    });
    expect(result.available).toBe(false);
  });
});
