/**
 * Parity of `allium-loop spec` with the reference `allium` CLI on a folder of specs.
 *
 *   node --conditions=development --import tsx tools/parity/parity.ts <specs-dir> [--reference-dir <dir>]
 *
 * Each `.allium` file is checked alone (as the stored answers were produced). With the reference binary (the
 * `ALLIUM_REF` environment variable, else `allium` on PATH) and no --reference-dir, the reference is run on each
 * file from inside the folder; otherwise its stored
 * answers `<name>.<check|analyse|model|plan>.json` are read from --reference-dir (default: `<specs-dir>/../reference`).
 * Where the live reference's answer differs from ours, it is asked again (up to REFERENCE_RETRIES times): it picks some
 * things from hash maps (an `analyse` `deadlock` finding's `cycle`, the order of a plan's obligations where a rule's
 * status value belongs to several entities), so one file can get several answers from it (docs/spec.md, known
 * differences). A file whose answers include ours counts as equal and is named after the table, with the command and
 * how many distinct answers the reference gave. Prints the agreement table; exits 0 (it reports, it does not judge).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  canonicalJson,
  checkReports,
  compareOutputs,
  formatParity,
  modelReport,
  planReport,
  type Diagnostic,
  type ImplementationOutput,
} from '@allium-loop/allium';

type Command = 'check' | 'analyse' | 'model' | 'plan';

/** Splits a stream of concatenated JSON documents (what the reference prints for several files). */
function parseJsonStream(text: string): unknown[] {
  const documents: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (c === '}') {
      depth -= 1;
      if (depth === 0) documents.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return documents;
}

/** The reference binary: `ALLIUM_REF` when set, else `allium` on PATH. */
const REFERENCE = process.env['ALLIUM_REF'] ?? 'allium';

function referenceAvailable(): boolean {
  return spawnSync(REFERENCE, ['--version'], { encoding: 'utf8' }).status === 0;
}

/**
 * Node's default of 1 MiB for a child's output is less than the reference prints for a big spec (1.6 MB for `check` on a
 * spec of a few thousand declarations), and a cut-off answer would count as a difference.
 */
const REFERENCE_OUTPUT_LIMIT = 1024 ** 3;

function runReference(dir: string, file: string, command: Command): unknown {
  let out = '';
  try {
    out = execFileSync(REFERENCE, [command, file], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: REFERENCE_OUTPUT_LIMIT,
    });
  } catch (error) {
    // A non-zero exit is an answer (a check with warnings exits 1); a crash or a refused run is not, and is said so
    // rather than counted as a difference of ours.
    const { stdout, signal, code } = error as { stdout?: unknown; signal?: string | null; code?: unknown };
    if (signal !== null && signal !== undefined)
      console.error(`reference ${command} ${file}: ended by ${signal}`);
    else if (typeof code === 'string') console.error(`reference ${command} ${file}: ${code}`);
    out = String(stdout ?? '');
  }
  return parseJsonStream(out)[0];
}

/** How many more times a live answer that differs from ours is asked for. */
const REFERENCE_RETRIES = 24;

/** The reference's answer: the first that equals ours, else the first, with how many distinct answers it gave. */
function liveAnswer(
  dir: string,
  file: string,
  command: Command,
  ours: ImplementationOutput,
): { answer: unknown; answers: number } {
  const first = runReference(dir, file, command);
  if (sameAnswer(command, first, ours)) return { answer: first, answers: 1 };
  const seen = new Set([canonicalJson(first)]);
  for (let retry = 0; retry < REFERENCE_RETRIES; retry += 1) {
    const again = runReference(dir, file, command);
    seen.add(canonicalJson(again));
    if (sameAnswer(command, again, ours)) return { answer: again, answers: seen.size };
  }
  return { answer: first, answers: seen.size };
}

function storedReference(referenceDir: string, name: string, command: Command): unknown {
  const path = join(referenceDir, `${name}.${command}.json`);
  return existsSync(path) ? parseJsonStream(readFileSync(path, 'utf8'))[0] : undefined;
}

/** Whether a reference answer for one command equals ours, as the table compares them. */
const sameAnswer = (command: Command, answer: unknown, ours: ImplementationOutput): boolean =>
  canonicalJson(toOutput((asked) => (asked === command ? answer : undefined))[command]) ===
  canonicalJson(ours[command]);

function toOutput(get: (command: Command) => unknown): ImplementationOutput {
  const check = get('check') as { diagnostics: Diagnostic[] } | undefined;
  const analyse = get('analyse') as { diagnostics: Diagnostic[]; findings: unknown[] } | undefined;
  const model = get('model');
  const plan = get('plan');
  return {
    ...(check === undefined ? {} : { check: { diagnostics: check.diagnostics } }),
    ...(analyse === undefined
      ? {}
      : { analyse: { diagnostics: analyse.diagnostics, findings: analyse.findings } }),
    ...(model === undefined ? {} : { model }),
    ...(plan === undefined ? {} : { plan }),
  };
}

function main(argv: readonly string[]): number {
  const [specsArg, ...rest] = argv;
  if (specsArg === undefined) {
    process.stderr.write('usage: parity.ts <specs-dir> [--reference-dir <dir>]\n');
    return 2;
  }
  const specsDir = resolve(specsArg);
  const flag = rest.indexOf('--reference-dir');
  const referenceDir = resolve(flag >= 0 ? (rest[flag + 1] ?? '') : join(specsDir, '..', 'reference'));
  const live = flag < 0 && referenceAvailable();
  const names = readdirSync(specsDir)
    .filter((file) => file.endsWith('.allium'))
    .sort();
  /** Files the reference answered in more than one way, with the number of distinct answers. */
  const unsettled: string[] = [];
  const files = names.map((file) => {
    const name = file.slice(0, -'.allium'.length);
    const text = readFileSync(join(specsDir, file), 'utf8');
    const source = { path: file, text };
    const ours = toOutput((command) => {
      if (command === 'check' || command === 'analyse') return checkReports([source], command).reports[0];
      if (command === 'model') return modelReport(source).report;
      return planReport(source).report;
    });
    const reference = toOutput((command) => {
      if (!live) return storedReference(referenceDir, name, command);
      const { answer, answers } = liveAnswer(specsDir, file, command, ours);
      if (answers > 1)
        unsettled.push(
          `${command} ${file} (${answers} answers${sameAnswer(command, answer, ours) ? '' : ', none ours'})`,
        );
      return answer;
    });
    return { file, ours, reference };
  });
  process.stdout.write(
    `reference: ${live ? `the binary ${REFERENCE}` : `stored answers in ${referenceDir}`}\n`,
  );
  process.stdout.write(formatParity(compareOutputs(files)));
  if (unsettled.length > 0)
    process.stdout.write(
      `\nthe reference gave more than one answer, run after run, for ${unsettled.length} command(s) on a file (counted equal where one of its answers is ours):\n${unsettled.map((line) => `  ${line}\n`).join('')}`,
    );
  return 0;
}

process.exitCode = main(process.argv.slice(2));
