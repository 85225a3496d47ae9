import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FIXTURE_DIR, fixtureNames, readFixture } from './fixtures.test-helpers.js';
import { canonicalJson, compareOutputs, formatParity } from './parity.js';
import { checkReports, modelReport, planReport, referenceJson } from './reports.js';

const reference = (name: string, command: string): unknown =>
  JSON.parse(readFileSync(join(FIXTURE_DIR, 'reference', `${name}.${command}.json`), 'utf8'));
const exitCodes = JSON.parse(readFileSync(join(FIXTURE_DIR, 'reference', 'index.json'), 'utf8')) as Record<
  string,
  { check: number; analyse: number; model: number; plan: number }
>;

describe('reference parity on the shared fixtures', () => {
  it.each(fixtureNames())('%s: check JSON and exit code equal the reference', (name) => {
    const { reports, exitCode } = checkReports(
      [{ path: `${name}.allium`, text: readFixture(name) }],
      'check',
    );
    expect(JSON.parse(referenceJson(reports[0]))).toEqual(reference(name, 'check'));
    expect(exitCode).toBe(exitCodes[`${name}.allium`]?.check);
  });

  it.each(fixtureNames())('%s: model JSON and exit code equal the reference', (name) => {
    const { report, exitCode } = modelReport({ path: `${name}.allium`, text: readFixture(name) });
    expect(JSON.parse(referenceJson(report))).toEqual(reference(name, 'model'));
    expect(exitCode).toBe(exitCodes[`${name}.allium`]?.model);
  });

  it.each(fixtureNames())('%s: plan JSON and exit code equal the reference', (name) => {
    const { report, exitCode } = planReport({ path: `${name}.allium`, text: readFixture(name) });
    expect(JSON.parse(referenceJson(report))).toEqual(reference(name, 'plan'));
    expect(exitCode).toBe(exitCodes[`${name}.allium`]?.plan);
  });

  it.each(fixtureNames())('%s: analyse diagnostics and findings equal the reference', (name) => {
    const { reports } = checkReports([{ path: `${name}.allium`, text: readFixture(name) }], 'analyse');
    const ours = JSON.parse(referenceJson(reports[0])) as { diagnostics: unknown; findings: unknown[] };
    const theirs = reference(name, 'analyse') as { diagnostics: unknown; findings: { type: string }[] };
    expect(ours.diagnostics).toEqual(theirs.diagnostics);
    expect(canonicalJson(ours.findings)).toBe(canonicalJson(theirs.findings));
  });
});

describe('the parity tool', () => {
  it('prints the agreement table over a folder with stored reference answers', () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const out = execFileSync(
      process.execPath,
      [
        '--conditions=development',
        '--import',
        'tsx',
        join(root, 'tools', 'parity', 'parity.ts'),
        FIXTURE_DIR,
        '--reference-dir',
        join(FIXTURE_DIR, 'reference'),
      ],
      { cwd: root, encoding: 'utf8' },
    );
    expect(out).toContain('files: 27');
    expect(out).toContain('verdict (error / no error) agrees: 27/27');
    expect(out).toContain('check JSON equal: 27/27');
    expect(out).toContain('error lines: reference 260, ours 260, both 260 (recall 1.00, precision 1.00)');
    expect(out).toContain('model equal: 27/27');
    expect(out).toContain('plan equal: 27/27');
  });

  /**
   * The tool against a stand-in for the reference binary that answers `analyse` in a way the test picks (its answers
   * counted in a file): `alternating` gives a wrong answer, then the stored one; `never` two wrong answers in turn;
   * `wrong` one wrong answer every time. Every other command gets the stored answer.
   */
  function runWithFakeReference(mode: 'alternating' | 'never' | 'wrong'): string {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'parity-fake-'));
    try {
      const specs = join(dir, 'specs');
      mkdirSync(specs);
      copyFileSync(join(FIXTURE_DIR, 'basic.input.allium'), join(specs, 'basic.input.allium'));
      const fake = join(dir, 'allium.cjs');
      writeFileSync(
        fake,
        `#!${process.execPath}
const fs = require('node:fs');
const [command, file] = process.argv.slice(2);
if (command === '--version') process.exit(0);
const stored = fs.readFileSync(${JSON.stringify(join(FIXTURE_DIR, 'reference'))} + '/' + file.replace(/[.]allium$/, '') + '.' + command + '.json', 'utf8');
if (command !== 'analyse') { process.stdout.write(stored); process.exit(0); }
const counter = ${JSON.stringify(join(dir, 'count'))};
const n = fs.existsSync(counter) ? Number(fs.readFileSync(counter, 'utf8')) : 0;
fs.writeFileSync(counter, String(n + 1));
const mode = ${JSON.stringify(mode)};
if (mode === 'alternating' && n % 2 === 1) { process.stdout.write(stored); process.exit(0); }
const report = JSON.parse(stored);
report.findings.push({ type: 'deadlock', summary: mode === 'never' ? 'wrong ' + (n % 2) : 'wrong' });
process.stdout.write(JSON.stringify(report, null, 2));
process.exit(1);
`,
      );
      chmodSync(fake, 0o755);
      return execFileSync(
        process.execPath,
        ['--conditions=development', '--import', 'tsx', join(root, 'tools', 'parity', 'parity.ts'), specs],
        { cwd: root, encoding: 'utf8', env: { ...process.env, ALLIUM_REF: fake } },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('asks the reference again when its answer differs, and names a file it answers in several ways', () => {
    const settled = runWithFakeReference('alternating');
    expect(settled).toContain('analyse JSON equal (diagnostics and findings): 1/1');
    expect(settled).toContain('for 1 command(s) on a file');
    expect(settled).toContain('  analyse basic.input.allium (2 answers)\n');

    const unsettled = runWithFakeReference('never');
    expect(unsettled).toContain('analyse JSON equal (diagnostics and findings): 0/1');
    expect(unsettled).toContain('  analyse basic.input.allium (2 answers, none ours)\n');

    // One wrong answer every time is a difference of ours, named as one, and not put down to the reference.
    const wrong = runWithFakeReference('wrong');
    expect(wrong).toContain('analyse JSON equal (diagnostics and findings): 0/1');
    expect(wrong).toContain('basic.input.allium: ok / DIFF / ok / ok');
    expect(wrong).not.toContain('more than one answer');
  }, 300_000);

  it('counts disagreements: a missed, an extra and a moved diagnostic', () => {
    const d = (code: string, line: number, severity: 'error' | 'warning' = 'warning') => ({
      code,
      severity,
      message: 'm',
      location: { file: 'f', line, col: 1 },
    });
    const table = compareOutputs([
      {
        file: 'f',
        ours: { check: { diagnostics: [d('a', 1), d('b', 3), d('x', 9, 'error')] }, model: { v: 1 } },
        reference: { check: { diagnostics: [d('a', 1), d('b', 2), d('c', 4)] }, model: { v: 2 }, plan: {} },
      },
    ]);
    expect(table.files[0]).toMatchObject({
      verdictAgrees: false,
      checkEqual: false,
      modelEqual: false,
      planEqual: false,
    });
    expect(table.codes.map((c) => [c.code, c.reference, c.ours, c.both])).toEqual([
      ['x', 0, 1, 0],
      ['a', 1, 1, 1],
      ['b', 1, 1, 0],
      ['c', 1, 0, 0],
    ]);
    expect(formatParity(table)).toContain('files that differ');
  });
});
