import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { CONFIG_FILE } from '../discovery/test-command-config.js';
import { walkProject } from '../probe/probe-project.js';
import { splitCommandLine, type SimpleCommand } from './command-words.js';
import { partHash, type HarnessEntry, type HarnessPart, type HarnessRecord } from './harness-record.js';

/** What {@link fingerprintHarness} looks at. */
export interface FingerprintHarnessOptions {
  readonly cwd: string;
  /** The test command and/or verify command, as run by `sh -c`. */
  readonly commands: readonly string[];
  /** The environment the commands run with; its `PATH` is searched for programs found inside the project. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Extra project paths the user protects (`protect:` in `allium-loop.yaml`). */
  readonly protect?: readonly string[];
  /** Test paths or globs the user allows to change (`allowTestChanges:`), recorded as given. */
  readonly allowTestChanges?: readonly string[];
}

const MAX_BYTES = 1_000_000;
const MAX_ENTRIES = 500;
const MAX_DEPTH = 6;
const PACKAGE_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const INTERPRETERS =
  /^(?:sh|bash|zsh|dash|ksh|node|nodejs|python[0-9.]*|ruby|perl|php|deno|tsx|ts-node|vite-node)$/;
/** Programs that only read or print their arguments: a file they name may be the work itself. */
const READERS = new Set([
  'test',
  '[',
  '[[',
  'cat',
  'grep',
  'egrep',
  'diff',
  'cmp',
  'ls',
  'wc',
  'head',
  'tail',
  'stat',
  'echo',
  'printf',
  'jq',
  'true',
  'false',
  'exit',
  'cd',
  'mkdir',
  'rm',
  'cp',
  'mv',
  'touch',
  'sleep',
]);
const SHELL_BUILTINS = new Set([
  'source',
  '.',
  'set',
  'unset',
  'export',
  'shift',
  'return',
  'eval',
  'trap',
  'wait',
]);
const HARNESS_EXT = /\.(?:[cm]?[jt]sx?|py|sh|bash|mk|ini|toml|cfg|conf|json|jsonc|ya?ml|rb|pl|php)$/;
const CODE_EXT = ['', '.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx', '/index.js', '/index.ts'];
/** Directories that hold the code under work: imports of a check script are not followed into them. */
const SOURCE_DIRS = /(?:^|\/)(?:src|lib|app|pkg|internal|cmd|source|sources)\//;
/**
 * Directories whose files are never fingerprinted as harness. Narrower than the project walker's skip list on
 * purpose: a check script the test command runs from `out/` or `.cache/` is still guarded.
 */
const SKIPPED_DIRS = new Set([
  'node_modules',
  '.git',
  '.allium-loop',
  'dist',
  'build',
  'target',
  'vendor',
  '__pycache__',
  '.venv',
  'venv',
  '.tox',
  'coverage',
]);

const RUNNER_CONFIGS: Readonly<Record<string, readonly string[]>> = {
  vitest: [
    ...['ts', 'mts', 'cts', 'js', 'mjs', 'cjs'].flatMap((e) => [`vitest.config.${e}`, `vite.config.${e}`]),
    'vitest.workspace.ts',
    'vitest.workspace.js',
    'vitest.workspace.json',
  ],
  jest: ['jest.config.js', 'jest.config.ts', 'jest.config.mjs', 'jest.config.cjs', 'jest.config.json'],
  mocha: ['.mocharc.js', '.mocharc.cjs', '.mocharc.yaml', '.mocharc.yml', '.mocharc.json', '.mocharc.jsonc'],
  pytest: ['pytest.ini'],
  cargo: ['.cargo/config.toml', '.cargo/config'],
};
const PACKAGE_KEYS: Readonly<Record<string, readonly string[]>> = { jest: ['jest'], mocha: ['mocha'] };
const SECTIONS: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  pytest: [
    ['pyproject.toml', 'tool.pytest.ini_options'],
    ['setup.cfg', 'tool:pytest'],
    ['tox.ini', 'pytest'],
  ],
  cargo: [
    ['Cargo.toml', 'lib'],
    ['Cargo.toml', '[test]'],
    ['Cargo.toml', 'profile.test'],
  ],
};

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

class HarnessWalk {
  readonly entries = new Map<string, HarnessEntry>();
  readonly files = new Map<string, string | null>();
  private readonly scanned = new Set<string>();
  private readonly runners = new Set<string>();
  private readonly pathEnv: string;

  constructor(
    readonly cwd: string,
    env: Readonly<Record<string, string | undefined>>,
  ) {
    this.pathEnv = env['PATH'] ?? '';
  }

  /** Project-relative POSIX path for `path` (resolved against `from`), or undefined when outside the project. */
  inProject(path: string, from = this.cwd): string | undefined {
    const absolute = isAbsolute(path) ? normalize(path) : resolve(from, path);
    const rel = toPosix(relative(this.cwd, absolute));
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
    if (rel.split('/').some((part) => SKIPPED_DIRS.has(part))) return undefined;
    return rel;
  }

  async read(path: string): Promise<string | null> {
    if (this.files.has(path)) return this.files.get(path)!;
    let text: string | null = null;
    const info = await stat(join(this.cwd, path)).catch(() => undefined);
    if (info?.isFile() === true && info.size <= MAX_BYTES)
      text = await readFile(join(this.cwd, path), 'utf8').catch(() => null);
    this.files.set(path, text);
    return text;
  }

  async isFile(path: string): Promise<boolean> {
    return (await this.read(path)) !== null;
  }

  async add(path: string, part: HarnessPart, label: string, why: string): Promise<void> {
    if (this.entries.size >= MAX_ENTRIES || this.entries.has(label)) return;
    this.entries.set(label, { label, path, part, sha256: partHash(await this.read(path), part), why });
  }

  async addFile(path: string, why: string): Promise<void> {
    await this.add(path, { kind: 'file' }, path, why);
  }

  /** A file the commands run or load: fingerprinted, then read for what it runs or loads in turn. */
  async addScript(path: string, why: string, depth: number): Promise<void> {
    await this.addFile(path, why);
    if (this.scanned.has(path) || depth > MAX_DEPTH) return;
    this.scanned.add(path);
    const text = await this.read(path);
    if (text === null) return;
    const dir = dirname(join(this.cwd, path));
    if (/\.[cm]?[jt]sx?$/.test(path)) await this.followJsImports(text, dir, path, depth);
    else if (path.endsWith('.py')) await this.followPythonImports(text, dir, path, depth);
    else if (/(?:^|\/)(?:GNU)?[Mm]akefile$|\.mk$/.test(path)) await this.scanMakefile(text, path, depth);
    else if (/\.(?:sh|bash)$/.test(path) || /^#!.*\b(?:ba|da|z)?sh\b/.test(text))
      await this.scanCommand(text, `run by ${path}`, depth + 1, dir);
    if (/\.(?:[cm]?[jt]s|json|ya?ml|toml|ini|cfg)$/.test(path) && !/\.test\.|\.spec\./.test(path))
      await this.followQuotedPaths(text, dir, path, depth);
  }

  private async followJsImports(text: string, dir: string, from: string, depth: number): Promise<void> {
    const specifiers = [
      ...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g),
    ].map((m) => m[1]!);
    for (const specifier of specifiers) {
      for (const ext of CODE_EXT) {
        const rel = this.inProject(`${specifier}${ext}`, dir);
        if (rel === undefined || SOURCE_DIRS.test(rel)) break;
        if (await this.isFile(rel)) {
          await this.addScript(rel, `imported by ${from}`, depth + 1);
          break;
        }
      }
    }
  }

  private async followPythonImports(text: string, dir: string, from: string, depth: number): Promise<void> {
    const modules = [...text.matchAll(/^\s*(?:from\s+(\.*[\w.]*)\s+import|import\s+([\w.]+))/gm)].map(
      (m) => m[1] ?? m[2]!,
    );
    for (const module of modules) {
      const dots = /^\.*/.exec(module)![0].length;
      const path = module.slice(dots).replaceAll('.', '/');
      const bases = dots > 0 ? [resolve(dir, '../'.repeat(dots - 1))] : [dir, this.cwd];
      for (const base of bases) {
        const candidates = path === '' ? ['__init__.py'] : [`${path}.py`, `${path}/__init__.py`];
        const found = await this.firstFile(candidates.map((c) => this.inProject(c, base)));
        if (found !== undefined && !SOURCE_DIRS.test(found)) {
          await this.addScript(found, `imported by ${from}`, depth + 1);
          break;
        }
      }
    }
  }

  private async followQuotedPaths(text: string, dir: string, from: string, depth: number): Promise<void> {
    for (const match of text.matchAll(/["']((?:\.{1,2}\/)?[\w@./-]+\.[\w]+)["']/g)) {
      const rel = this.inProject(match[1]!, dir) ?? this.inProject(match[1]!);
      if (rel === undefined || SOURCE_DIRS.test(rel) || !HARNESS_EXT.test(rel)) continue;
      if (await this.isFile(rel)) await this.addScript(rel, `named by ${from}`, depth + 1);
    }
  }

  private async scanMakefile(text: string, from: string, depth: number): Promise<void> {
    for (const line of text.split('\n')) {
      const include = /^\s*-?include\s+(.+)$/.exec(line);
      if (include !== null) {
        for (const name of include[1]!.trim().split(/\s+/)) {
          const rel = this.inProject(name);
          if (rel !== undefined) await this.addScript(rel, `included by ${from}`, depth + 1);
        }
      } else if (line.startsWith('\t')) {
        await this.scanCommand(line.replace(/^\t[@+-]*/, ''), `run by ${from}`, depth + 1);
      }
    }
  }

  /** A path a command names: relative to the project root (where commands run), else to the script's folder. */
  private async locate(word: string, dir: string): Promise<string | undefined> {
    const fromRoot = this.inProject(word);
    if (fromRoot !== undefined && (await this.isFile(fromRoot))) return fromRoot;
    const fromDir = dir === this.cwd ? undefined : this.inProject(word, dir);
    if (fromDir !== undefined && (await this.isFile(fromDir))) return fromDir;
    return fromRoot;
  }

  private async firstFile(candidates: readonly (string | undefined)[]): Promise<string | undefined> {
    for (const candidate of candidates)
      if (candidate !== undefined && (await this.isFile(candidate))) return candidate;
    return undefined;
  }

  /** Reads a command line: what it runs, what it sources, which package scripts and build files are behind it. */
  async scanCommand(line: string, why: string, depth: number, dir = this.cwd): Promise<void> {
    if (depth > MAX_DEPTH) return;
    let pathValue = this.pathEnv;
    for (const command of splitCommandLine(line)) {
      const assigned = command.assignments['PATH'];
      if (assigned !== undefined) {
        pathValue = assigned.replace(/\$\{?PATH\}?/g, pathValue);
        if (command.program === undefined) continue;
      }
      await this.scanSimple(command, why, depth, dir, pathValue);
    }
  }

  private async scanSimple(
    command: SimpleCommand,
    why: string,
    depth: number,
    dir: string,
    pathValue: string,
  ): Promise<void> {
    const { program, args } = command;
    if (program === undefined) return;
    const base = program.slice(program.lastIndexOf('/') + 1);
    if (program === 'source' || program === '.') {
      const rel = args[0] === undefined ? undefined : await this.locate(args[0], dir);
      if (rel !== undefined) await this.addScript(rel, `sourced (${why})`, depth + 1);
      return;
    }
    if (READERS.has(base) || SHELL_BUILTINS.has(base)) return;
    if (PACKAGE_RUNNERS.has(base)) return this.scanPackageScript(base, args, why, depth);
    if (base === 'make' || base === 'gmake') return this.scanMake(args, why, depth);
    this.noteRunner(base, args);
    if (program.includes('/')) {
      const rel = await this.locate(program, dir);
      if (rel !== undefined) await this.addScript(rel, `run (${why})`, depth + 1);
    } else {
      await this.resolveThroughPath(program, pathValue, why, depth);
    }
    const interpreter = INTERPRETERS.test(base);
    let scriptSeen = false;
    for (const word of args) {
      const value = word.replace(/^--?[\w-]+=/, '');
      if (value.startsWith('-') || value === '') continue;
      const rel = await this.locate(value, dir);
      if (rel === undefined || !(await this.isFile(rel))) continue;
      if ((interpreter && !scriptSeen) || HARNESS_EXT.test(rel)) {
        await this.addScript(rel, `named by \`${[program, ...args].join(' ').slice(0, 80)}\``, depth + 1);
        scriptSeen = true;
      }
    }
    if (base.startsWith('python') && args[0] === '-m' && args[1] !== undefined) this.noteRunner(args[1], []);
  }

  private async resolveThroughPath(
    program: string,
    pathValue: string,
    why: string,
    depth: number,
  ): Promise<void> {
    if (pathValue === '') return;
    for (const entry of pathValue.split(':')) {
      const dir = entry === '' ? '.' : entry;
      const rel = this.inProject(join(dir, program));
      if (rel !== undefined) {
        await this.addFile(rel, `\`${program}\` found through PATH entry ${dir} (${why})`);
        if (await this.isFile(rel)) return this.addScript(rel, `run (${why})`, depth + 1);
        continue;
      }
      if (!isAbsolute(dir)) continue;
      const found = await stat(join(dir, program)).catch(() => undefined);
      if (found?.isFile() === true) return;
    }
  }

  private async scanPackageScript(
    runner: string,
    args: readonly string[],
    why: string,
    depth: number,
  ): Promise<void> {
    const end = args.indexOf('--');
    const [first, second] = (end < 0 ? args : args.slice(0, end)).filter((a) => !a.startsWith('-'));
    let name: string | undefined;
    if (first === 'run' || first === 'run-script') name = second;
    else if (first === 'test' || first === 't' || first === 'tst') name = 'test';
    else if (runner !== 'npm' && first !== undefined && !first.startsWith('-')) name = first;
    if (name === undefined) return;
    const text = await this.read('package.json');
    let scripts: Record<string, unknown> = {};
    try {
      scripts = ((JSON.parse(text ?? '{}') as { scripts?: Record<string, unknown> }).scripts ?? {}) as Record<
        string,
        unknown
      >;
    } catch {
      // An unreadable package.json: its keys are still fingerprinted (as its whole text) below.
    }
    for (const hook of [`pre${name}`, name, `post${name}`]) {
      await this.add(
        'package.json',
        { kind: 'json', key: ['scripts', hook] },
        `package.json scripts.${hook}`,
        `run by ${runner} ${name} (${why})`,
      );
      const script = scripts[hook];
      if (typeof script === 'string')
        await this.scanCommand(script, `package.json scripts.${hook}`, depth + 1);
    }
  }

  private async scanMake(args: readonly string[], why: string, depth: number): Promise<void> {
    const fileFlag = args.findIndex((a) => a === '-f' || a === '--file');
    const named = fileFlag >= 0 ? args[fileFlag + 1] : undefined;
    const candidates = named === undefined ? ['GNUmakefile', 'makefile', 'Makefile'] : [named];
    for (const candidate of candidates) {
      const rel = this.inProject(candidate);
      if (rel === undefined) continue;
      await this.addScript(rel, `read by make (${why})`, depth + 1);
      if (await this.isFile(rel)) return;
    }
  }

  private noteRunner(base: string, args: readonly string[]): void {
    if (['vitest', 'vite-node'].includes(base)) this.runners.add('vitest');
    else if (base === 'jest') this.runners.add('jest');
    else if (['mocha', '_mocha'].includes(base)) this.runners.add('mocha');
    else if (base === 'pytest' || base === 'py.test') this.runners.add('pytest');
    else if (base === 'cargo' && args.includes('test')) this.runners.add('cargo');
    else if (base === 'cargo' && args.includes('nextest')) this.runners.add('cargo');
  }

  /** Runner configuration files and sections of the runners the commands use, present or not. */
  async addRunnerConfigs(): Promise<void> {
    for (const runner of [...this.runners].sort()) {
      for (const name of RUNNER_CONFIGS[runner] ?? [])
        await this.addScript(name, `${runner} configuration`, 1);
      for (const key of PACKAGE_KEYS[runner] ?? [])
        await this.add(
          'package.json',
          { kind: 'json', key: [key] },
          `package.json ${key}`,
          `${runner} configuration`,
        );
      for (const [file, header] of SECTIONS[runner] ?? [])
        await this.add(file, { kind: 'section', header }, `${file} [${header}]`, `${runner} configuration`);
      if (runner === 'pytest') {
        for (const conftest of await this.findNamed('conftest.py'))
          await this.addScript(conftest, 'pytest configuration', 1);
        await this.addFile('conftest.py', 'pytest configuration');
      }
    }
  }

  /** Files called `name` anywhere in the project, found by the engine's one walker (`walkProject`). */
  private async findNamed(name: string): Promise<string[]> {
    const { files } = await walkProject(this.cwd);
    return files.filter((path) => path === name || path.endsWith(`/${name}`));
  }
}

/**
 * Fingerprints what the test and verify commands run or read that is not the code under work: `allium-loop.yaml`;
 * the `package.json` scripts behind `npm test`/`pnpm run x` (with their `pre`/`post` hooks) and what those scripts
 * run in turn; the Makefile behind `make …` (with its includes and what its recipes run); every project file a
 * command executes or names with a script or config extension, what such a script imports (relative imports,
 * not followed into `src/`, `lib/` and other source folders) and sources; programs found through a `PATH` entry
 * inside the project, recorded even when absent there (a file that appears later shadows the real one); and the
 * configuration of the runners the commands use (vitest/vite, jest, mocha configs, `pytest.ini`,
 * `[tool.pytest.ini_options]`, `[tool:pytest]`, `[pytest]`, every `conftest.py`, Cargo's `[lib]`, `[[test]]`,
 * `[profile.test]` and `.cargo/config`), present or absent. Never runs anything.
 */
export async function fingerprintHarness(options: FingerprintHarnessOptions): Promise<HarnessRecord> {
  const walk = new HarnessWalk(resolve(options.cwd), options.env ?? {});
  await walk.addFile(CONFIG_FILE, 'the engine configuration (testCommand)');
  for (const command of options.commands) await walk.scanCommand(command, `\`${command}\``, 0);
  await walk.addRunnerConfigs();
  for (const path of options.protect ?? []) {
    const rel = walk.inProject(path);
    if (rel !== undefined) await walk.addScript(rel, `protected in ${CONFIG_FILE}`, 0);
  }
  const entries = [...walk.entries.values()];
  const files: Record<string, string | null> = {};
  for (const entry of entries) files[entry.path] = walk.files.get(entry.path) ?? null;
  return {
    version: 1,
    commands: [...options.commands],
    entries,
    files,
    allowTestChanges: [...(options.allowTestChanges ?? [])],
  };
}

/** Reads, now, every file the record's entries cover (`null` for a missing one). */
export async function readHarnessFiles(
  cwd: string,
  record: HarnessRecord,
): Promise<Map<string, string | null>> {
  const current = new Map<string, string | null>();
  for (const path of new Set(record.entries.map((e) => e.path))) {
    const info = await stat(join(cwd, path)).catch(() => undefined);
    // Files over the size limit are read as absent, here as when the record was taken.
    current.set(
      path,
      info?.isFile() === true && info.size <= MAX_BYTES
        ? await readFile(join(cwd, path), 'utf8').catch(() => null)
        : null,
    );
  }
  return current;
}
