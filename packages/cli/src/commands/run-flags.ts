import { join } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/**
 * The one flag pipeline of `run` and `resume`, for the spec loop and every loop mode: one schema (type, value
 * kind, default shown in help, who may use it), one parser, one help text. Commands never call `parseArgs` for
 * these flags themselves. This module is loaded for `--help` too, so it imports nothing heavy.
 */

/** Who may use a flag: every loop, only the spec loop, only the loop modes, or only `resume`. */
export type FlagScope = 'all' | 'spec' | 'modes' | 'resume';

/** How a string flag's value is checked. */
export type ValueKind = 'text' | 'count' | 'positive' | 'nonnegative' | 'number';

/** One flag of the schema. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly kind?: ValueKind;
  /** The value's placeholder in help, e.g. `N`. */
  readonly arg?: string;
  readonly help: string;
  /** The default shown in help (the value itself is applied where it is used: see {@link FLAG_DEFAULTS}). */
  readonly default?: string;
  /** The only values the flag takes (checked by the parser). */
  readonly choices?: readonly string[];
  /** A duration in seconds that becomes a Node timer: at most {@link MAX_TIMER_SECONDS}. */
  readonly timer?: true;
  readonly scope: FlagScope;
  readonly group: 'Spec loop' | 'Loop modes' | 'Agent' | 'Caps' | 'Output';
}

/** Defaults the CLI itself applies (caps' defaults live with the engine: `DEFAULT_CAPS` of the ledger). */
export const FLAG_DEFAULTS = {
  stateFile: '.al-state.json',
  /** The PRD of `--stories` given without a path: agent-loop's. */
  storiesPrd: '.loop/prd.json',
  evalRetries: 3,
  /** `--interval` of `--verify`: 30 s between ticks, as `/loop` waits. */
  intervalSeconds: 30,
  modeMaxTicks: { verify: 10, 'state-file': 10, stories: 50 },
} as const;

/** Every flag of `run` and `resume`, in the order `run --help` lists them. */
export const RUN_FLAG_SCHEMA = {
  entry: {
    type: 'string',
    arg: 'elicit|distill|tend|weed',
    choices: ['elicit', 'distill', 'tend', 'weed'],
    help: 'override the detected entry point',
    default: 'detected',
    scope: 'spec',
    group: 'Spec loop',
  },
  'strict-questions': {
    type: 'boolean',
    help: 'parked open questions block convergence too',
    scope: 'spec',
    group: 'Spec loop',
  },
  scope: {
    type: 'string',
    arg: 'PATHS',
    help: 'comma-separated paths that bound every phase: what they see, change and test; edits elsewhere are reverted',
    default: 'the whole project',
    scope: 'spec',
    group: 'Spec loop',
  },
  concurrency: {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'slices of a wave run at once, each in its own git worktree (docs/scale-out.md)',
    default: '1',
    scope: 'spec',
    group: 'Spec loop',
  },
  'stall-warning-ticks': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'flat ticks in a row before the "⚠ tick n · no progress" warning (upstream stall_warning_ticks)',
    default: '1',
    scope: 'spec',
    group: 'Spec loop',
  },
  'on-drift': {
    type: 'string',
    arg: 'reverify|reset|stop',
    choices: ['reverify', 'reset', 'stop'],
    help: 'what resume does when the working tree changed since the last checkpoint',
    default: 'reverify',
    scope: 'resume',
    group: 'Spec loop',
  },
  slice: {
    type: 'string',
    arg: 'ID',
    help: 'run one slice of a stored plan (with --plan; a CI matrix job), not a goal',
    scope: 'spec',
    group: 'Spec loop',
  },
  plan: {
    type: 'string',
    arg: 'FILE',
    help: "the plan file 'allium-loop plan --plan-out' wrote (with --slice)",
    scope: 'spec',
    group: 'Spec loop',
  },
  'ledger-out': {
    type: 'string',
    arg: 'FILE',
    help: 'also copy the final ledger here (with --slice; the artifact merge-ledgers reads)',
    scope: 'spec',
    group: 'Spec loop',
  },
  verify: {
    type: 'string',
    arg: '"<command>"',
    help: 'verify mode: run this command after every agent step; exit 0 converges',
    scope: 'modes',
    group: 'Loop modes',
  },
  hillclimb: {
    type: 'boolean',
    help: 'keep a tick only when the score improves; revert the others (needs --score)',
    scope: 'modes',
    group: 'Loop modes',
  },
  score: {
    type: 'string',
    arg: '"<regex>"',
    help: 'where the score is in the verify output (first group, last match)',
    scope: 'modes',
    group: 'Loop modes',
  },
  minimize: { type: 'boolean', help: 'lower scores are better', scope: 'modes', group: 'Loop modes' },
  target: {
    type: 'string',
    kind: 'number',
    arg: 'N',
    help: 'converge once the best score reaches N',
    scope: 'modes',
    group: 'Loop modes',
  },
  interval: {
    type: 'string',
    kind: 'nonnegative',
    timer: true,
    arg: 'SECONDS',
    help: 'wait between ticks of verify mode, as /loop does (Ctrl-C and the wall clock cut it short)',
    default: String(FLAG_DEFAULTS.intervalSeconds),
    scope: 'modes',
    group: 'Loop modes',
  },
  stories: {
    type: 'string',
    arg: '[prd.json]',
    help: 'stories mode: work the userStories of a PRD (generator, then a sceptical evaluator); default .loop/prd.json, with .loop/config.json read when present',
    scope: 'modes',
    group: 'Loop modes',
  },
  story: { type: 'string', arg: 'ID', help: 'work only this story', scope: 'modes', group: 'Loop modes' },
  'skip-eval': {
    type: 'boolean',
    help: 'no evaluator phase (the verify command, when given, still gates)',
    scope: 'modes',
    group: 'Loop modes',
  },
  'eval-retries': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'rejections before a story is blocked',
    default: String(FLAG_DEFAULTS.evalRetries),
    scope: 'modes',
    group: 'Loop modes',
  },
  fresh: {
    type: 'boolean',
    help: "start the goal's bounds from zero (by default a goal's ticks, spend and wall clock are cumulative across runs)",
    scope: 'modes',
    group: 'Loop modes',
  },
  'state-file': {
    type: 'string',
    arg: '[path]',
    help: 'state-file mode: an agent-maintained state file',
    default: FLAG_DEFAULTS.stateFile,
    scope: 'modes',
    group: 'Loop modes',
  },
  agent: {
    type: 'string',
    arg: 'KIND',
    help: 'claude, codex, gemini, aider, opencode, command, replay',
    default: 'agent.kind in allium-loop.yaml, else claude',
    scope: 'all',
    group: 'Agent',
  },
  model: { type: 'string', arg: 'NAME', help: "the agent's model", scope: 'all', group: 'Agent' },
  'permission-mode': {
    type: 'string',
    arg: 'MODE',
    help: "Claude Code's --permission-mode",
    default: 'acceptEdits',
    scope: 'all',
    group: 'Agent',
  },
  'phase-agents': {
    type: 'string',
    arg: 'own|allium',
    choices: ['own', 'allium'],
    help: "allium: distill, tend, propagate and weed run as the Allium plugin's agents (allium:<phase>; Claude Code with the plugin installed)",
    default: 'own',
    scope: 'spec',
    group: 'Agent',
  },
  'agent-script': {
    type: 'string',
    arg: 'PATH',
    help: "the replay agent's script (implies --agent replay)",
    scope: 'all',
    group: 'Agent',
  },
  'agent-command': {
    type: 'string',
    arg: '"PROG {prompt_file} {result_file}"',
    help: 'the command agent (implies --agent command); split on spaces, quotes honoured, no shell',
    scope: 'all',
    group: 'Agent',
  },
  'max-ticks': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'hard cap on ticks',
    default: '6; verify and state-file 10; stories 50',
    scope: 'all',
    group: 'Caps',
  },
  'max-iterations': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: "/loop's name for --max-ticks (both given: they must agree)",
    scope: 'modes',
    group: 'Caps',
  },
  'no-progress-ticks': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'ticks with an unchanged fingerprint before no_progress',
    default: '2',
    scope: 'all',
    group: 'Caps',
  },
  'max-fix-attempts': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'failed fix attempts on the same failing tests before escalating',
    default: '3',
    scope: 'spec',
    group: 'Caps',
  },
  'inner-loop-max': {
    type: 'string',
    kind: 'count',
    arg: 'N',
    help: 'implement → test rounds within one tick',
    default: '3',
    scope: 'spec',
    group: 'Caps',
  },
  'wall-clock': {
    type: 'string',
    kind: 'positive',
    timer: true,
    arg: 'SECONDS',
    help: 'wall-clock cap for the whole run, across resumes',
    default: 'none',
    scope: 'all',
    group: 'Caps',
  },
  'budget-usd': {
    type: 'string',
    kind: 'positive',
    arg: 'X',
    help: 'cost cap; a call starts only when its worst case fits',
    default: 'none',
    scope: 'all',
    group: 'Caps',
  },
  'max-call-usd': {
    type: 'string',
    kind: 'positive',
    arg: 'X',
    help: 'the worst case of one call',
    default: 'unknown',
    scope: 'spec',
    group: 'Caps',
  },
  'agent-timeout': {
    type: 'string',
    kind: 'positive',
    timer: true,
    arg: 'SECONDS',
    help: "one agent call; the agent's whole process tree is killed after it",
    default: '1800',
    scope: 'all',
    group: 'Caps',
  },
  'test-timeout': {
    type: 'string',
    kind: 'positive',
    timer: true,
    arg: 'SECONDS',
    help: 'one test run; its whole process tree is killed after it',
    default: '600',
    scope: 'all',
    group: 'Caps',
  },
  json: {
    type: 'boolean',
    help: "print the journal's events as NDJSON on stdout (nothing else goes to stdout)",
    scope: 'all',
    group: 'Output',
  },
  quiet: {
    type: 'boolean',
    short: 'q',
    help: 'no progress: only the final report (errors still go to stderr)',
    scope: 'all',
    group: 'Output',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help', scope: 'all', group: 'Output' },
} as const satisfies Record<string, FlagSpec>;

/** The schema as `parseArgs` options: only type and short name (no defaults: absent means "not given"). */
const PARSE_OPTIONS = Object.fromEntries(
  Object.entries(RUN_FLAG_SCHEMA).map(([name, spec]: [string, FlagSpec]) => [
    name,
    spec.short === undefined ? { type: spec.type } : { type: spec.type, short: spec.short },
  ]),
) as NonNullable<ParseArgsConfig['options']>;

/** A flag name of {@link RUN_FLAG_SCHEMA}. */
export type RunFlag = keyof typeof RUN_FLAG_SCHEMA;

/** Parsed values: strings for value flags, booleans for switches; absent when not given. */
export type RunFlagValues = {
  readonly [K in RunFlag]?: (typeof RUN_FLAG_SCHEMA)[K]['type'] extends 'boolean' ? boolean : string;
};

/** The flags that select a loop mode; without any of them `run` is the spec loop. */
export const MODE_SELECTORS = ['verify', 'stories', 'state-file'] as const;

/** A usage error in the flags: the CLI prints the message and exits 2. */
export class FlagError extends Error {}

/** The result of {@link parseRunFlags}. */
export interface ParsedRunFlags {
  readonly values: RunFlagValues;
  readonly positionals: readonly string[];
  /** The loop the flags select: `spec`, or the mode named by `--verify` / `--stories` / `--state-file`. */
  readonly loop: 'spec' | 'verify' | 'stories' | 'state-file';
}

/**
 * Parses and checks the flags of `run` or `resume`: unknown flags, bad numbers, flags of another loop and
 * incompatible modes are {@link FlagError}s. Numeric flags are checked here once; read them with {@link numberFlag}.
 */
export function parseRunFlags(args: readonly string[], command: 'run' | 'resume'): ParsedRunFlags {
  let parsed: {
    values: Record<string, unknown>;
    positionals: string[];
    tokens: { kind: string; name?: string; rawName?: string }[];
  };
  try {
    parsed = parseArgs({
      args: withPathDefaults(args),
      options: PARSE_OPTIONS,
      strict: true,
      allowPositionals: true,
      tokens: true,
    });
  } catch (error) {
    throw new FlagError((error as Error).message.replace(/\n+/g, ' '));
  }
  refuseRepeats(parsed.tokens);
  const values = parsed.values as RunFlagValues;
  if (values.help === true) return { values, positionals: parsed.positionals, loop: 'spec' };
  for (const [name, spec] of Object.entries(RUN_FLAG_SCHEMA) as [RunFlag, FlagSpec][])
    checkValue(values, name, spec);
  const selected = MODE_SELECTORS.filter((flag) => values[flag] !== undefined);
  if (command === 'resume' && selected.length > 0)
    throw new FlagError(
      `--${selected[0]!} starts a run; resume continues one with the mode it was started with.`,
    );
  if (selected.includes('state-file') && selected.length > 1)
    throw new FlagError('--state-file cannot be combined with --verify or --stories.');
  const loop = selected.includes('stories') ? 'stories' : (selected[0] ?? 'spec');
  checkScopes(values, loop, command);
  if (loop === 'state-file') return { ...foldAlArguments(values, parsed.positionals), loop };
  return { values, positionals: parsed.positionals, loop };
}

/**
 * The `/al` arguments (`/al <goal> [workdir=<path>] [max=<N>]`), words after `--state-file` that stand for flags
 * of this schema: `max=N` is `--max-ticks N` (the same check), `workdir=DIR` is `--state-file DIR/.al-state.json`.
 * Folded into the values here, so every later step sees only flags; one beside the flag it stands for, or given
 * twice, is a {@link FlagError} (which one was meant cannot be guessed).
 */
function foldAlArguments(
  values: RunFlagValues,
  words: readonly string[],
): Pick<ParsedRunFlags, 'values' | 'positionals'> {
  const folded: { 'state-file'?: string; 'max-ticks'?: string } = {};
  const positionals: string[] = [];
  for (const word of words) {
    const match = /^(workdir|max)=(.*)$/s.exec(word);
    if (match === null) {
      positionals.push(word);
      continue;
    }
    const [, name, value] = match as unknown as [string, 'workdir' | 'max', string];
    const flag = name === 'workdir' ? 'state-file' : 'max-ticks';
    if (folded[flag] !== undefined) throw new FlagError(`${name}= was given twice; give it once.`);
    if (name === 'workdir') {
      if (value.trim() === '') throw new FlagError(`workdir= needs a directory, not ''.`);
      if (values['state-file'] !== FLAG_DEFAULTS.stateFile)
        throw new FlagError(
          `workdir= names the directory of ${FLAG_DEFAULTS.stateFile}; give it or a --state-file path, not both.`,
        );
      folded['state-file'] = join(value, FLAG_DEFAULTS.stateFile);
    } else {
      if (values['max-ticks'] !== undefined || values['max-iterations'] !== undefined)
        throw new FlagError(
          `max= is the tick cap; give it or --${values['max-ticks'] === undefined ? 'max-iterations' : 'max-ticks'}, not both.`,
        );
      try {
        numberFlag({ 'max-ticks': value }, 'max-ticks');
      } catch {
        throw new FlagError(`max= takes ${KIND_TEXT.count}, not '${value}'.`);
      }
      folded['max-ticks'] = value;
    }
  }
  return { values: { ...values, ...folded }, positionals };
}

function checkScopes(values: RunFlagValues, loop: ParsedRunFlags['loop'], command: 'run' | 'resume'): void {
  for (const [name, spec] of Object.entries(RUN_FLAG_SCHEMA) as [RunFlag, FlagSpec][]) {
    if (values[name] === undefined) continue;
    if (spec.scope === 'spec' && loop !== 'spec')
      throw new FlagError(`--${name} belongs to the spec loop; it does not apply with --${loop}.`);
    if (spec.scope === 'modes' && loop === 'spec')
      throw new FlagError(
        `--${name} belongs to the loop modes; give --verify, --stories or --state-file with it.`,
      );
    if (spec.scope === 'resume' && command !== 'resume')
      throw new FlagError(`--${name} applies to resume only.`);
  }
}

/**
 * A flag given twice is a usage error, never "the last one wins": `--max-ticks 3 … --max-ticks 30` would otherwise
 * run with a cap the user may not have meant.
 */
function refuseRepeats(tokens: readonly { kind: string; name?: string; rawName?: string }[]): void {
  const seen = new Map<string, string>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const first = seen.get(token.name);
    if (first !== undefined)
      throw new FlagError(
        `--${token.name} was given twice${first === token.rawName ? '' : ` (${first} and ${token.rawName ?? ''})`}; give it once.`,
      );
    seen.set(token.name, token.rawName ?? `--${token.name}`);
  }
}

/** The checks of one given flag's value: not empty, one of its choices, a number of its kind, a settable timer. */
function checkValue(values: RunFlagValues, name: RunFlag, spec: FlagSpec): void {
  const raw = values[name];
  if (typeof raw !== 'string') return;
  if (raw.trim() === '' && name !== 'state-file') throw new FlagError(`--${name} needs a value, not ''.`);
  if (spec.choices !== undefined && !spec.choices.includes(raw))
    throw new FlagError(`--${name} takes one of ${spec.choices.join(', ')}, not '${raw}'.`);
  const n = numberFlag(values, name);
  if (n === undefined || spec.timer !== true) return;
  const problem = timerLimitProblem(`--${name}`, n);
  if (problem !== undefined) throw new FlagError(problem);
}

/** The longest timer Node can set, in ms (`MAX_TIMEOUT_MS` of the agents package; a test keeps them equal). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Why a duration in seconds cannot be a timer: Node fires a timer longer than {@link MAX_TIMER_MS} after 1 ms,
 * so such a limit would time every call out at once. Undefined when it can.
 */
export function timerLimitProblem(name: string, seconds: number): string | undefined {
  if (Math.round(seconds * 1000) <= MAX_TIMER_MS) return undefined;
  const most = Math.floor(MAX_TIMER_MS / 1000);
  return `${name} ${String(seconds)} is longer than the longest timer Node can set: at most ${String(most)} seconds (about 24 days).`;
}

/**
 * `--state-file` and `--stories` may stand alone: each takes the next argument only when that looks like a path to
 * a JSON file; otherwise its default (`.al-state.json`, `.loop/prd.json`) is used.
 */
function withPathDefaults(args: readonly string[]): string[] {
  const defaults: Record<string, string> = {
    '--state-file': FLAG_DEFAULTS.stateFile,
    '--stories': FLAG_DEFAULTS.storiesPrd,
  };
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    out.push(arg);
    const fallback = defaults[arg];
    if (fallback === undefined) continue;
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('-') && (next.endsWith('.json') || next.includes('/')))
      continue;
    out.push(fallback);
  }
  return out;
}

const KIND_TEXT: Record<ValueKind, string> = {
  text: 'a value',
  count: 'a positive whole number',
  positive: 'a positive number',
  nonnegative: 'a number of zero or more',
  number: 'a number',
};

/** The checked number of a numeric flag, or `undefined` when it was not given. Throws {@link FlagError}. */
export function numberFlag(values: RunFlagValues, name: RunFlag): number | undefined {
  const spec: FlagSpec = RUN_FLAG_SCHEMA[name];
  const raw = values[name];
  if (typeof raw !== 'string' || spec.kind === undefined || spec.kind === 'text') return undefined;
  const n = Number(raw);
  const bad =
    raw.trim() === '' ||
    !Number.isFinite(n) ||
    (spec.kind === 'count' && (!Number.isSafeInteger(n) || n <= 0)) ||
    (spec.kind === 'positive' && n <= 0) ||
    (spec.kind === 'nonnegative' && n < 0);
  if (bad) throw new FlagError(`--${name} takes ${KIND_TEXT[spec.kind]}, not '${raw}'.`);
  return n;
}

/**
 * The tick cap the flags give: `--max-ticks`, or `--max-iterations` (its `/loop` name, same meaning). Given both,
 * they must name the same number, else it is a {@link FlagError} (which one was meant cannot be guessed).
 */
export function maxTicksFlag(values: RunFlagValues): number | undefined {
  const ticks = numberFlag(values, 'max-ticks');
  const iterations = numberFlag(values, 'max-iterations');
  if (ticks !== undefined && iterations !== undefined && ticks !== iterations)
    throw new FlagError(
      `--max-ticks ${String(ticks)} and --max-iterations ${String(iterations)} disagree; they are one cap, give one of them.`,
    );
  return ticks ?? iterations;
}

/** Splits a command template on whitespace, honouring single and double quotes; no shell is involved. */
export function splitCommand(template: string): string[] {
  const argv: string[] = [];
  let current: string | undefined;
  let quote: string | undefined;
  for (const char of template) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else current = (current ?? '') + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      current ??= '';
    } else if (/\s/.test(char)) {
      if (current !== undefined) argv.push(current);
      current = undefined;
    } else {
      current = (current ?? '') + char;
    }
  }
  if (quote !== undefined) throw new FlagError(`unclosed ${quote} in --agent-command`);
  if (current !== undefined) argv.push(current);
  if (argv.length === 0) throw new FlagError('--agent-command is empty.');
  return argv;
}

function flagLine(name: string, spec: FlagSpec): [string, string] {
  const left = `${spec.short === undefined ? '    ' : `-${spec.short}, `}--${name}${spec.arg === undefined ? '' : ` ${spec.arg}`}`;
  return [left, `${spec.help}${spec.default === undefined ? '' : ` (default: ${spec.default})`}`];
}

/** The help of `run` or `resume`, generated from {@link RUN_FLAG_SCHEMA}: every flag, grouped. */
export function renderRunHelp(command: 'run' | 'resume'): string {
  const usage =
    command === 'run'
      ? [
          'Usage: allium-loop run ["<goal>"] [options]',
          '       allium-loop run "<goal>" --verify "<command>" [--hillclimb --score "<regex>" [--minimize] [--target N]]',
          '       allium-loop run ["<goal>"] --stories <prd.json> [--story ID] [--skip-eval] [--verify "<command>"]',
          '       allium-loop run ["<goal>"] --state-file [path]',
          '',
          'Drives a goal to convergence against the spec in the current directory, or, with --verify, --stories or',
          '--state-file, runs one of the loop modes (no spec needed; see docs/modes.md). Without a goal, the spec loop',
          'infers one (a blocking question, a failing test, spec drift) or asks on a terminal (docs/cli.md).',
        ]
      : [
          'Usage: allium-loop resume <slug> [options]',
          '',
          'Continues a run from its ledger in a fresh process. Caps and agent flags given again override the stored',
          'ones; a loop-mode run resumes with the mode it was started with.',
        ];
  const entries = (Object.entries(RUN_FLAG_SCHEMA) as [RunFlag, FlagSpec][]).filter(([, spec]) =>
    command === 'run' ? spec.scope !== 'resume' : spec.scope !== 'modes',
  );
  const lines = entries.map(([name, spec]) => ({ group: spec.group, cells: flagLine(name, spec) }));
  const width = 30;
  const out = [...usage];
  for (const group of ['Spec loop', 'Loop modes', 'Agent', 'Caps', 'Output'] as const) {
    const rows = lines.filter((line) => line.group === group);
    if (rows.length === 0) continue;
    out.push('', `${group}:`);
    for (const { cells } of rows) {
      if (cells[0].length > width) out.push(`  ${cells[0]}`, `  ${''.padEnd(width)}  ${cells[1]}`);
      else out.push(`  ${cells[0].padEnd(width)}  ${cells[1]}`);
    }
  }
  out.push(
    '',
    'Exit codes: 0 converged, 1 failed, 2 usage, 3 max_ticks, 4 no_progress, 5 awaiting_input, 6 timed_out,',
    '7 budget_exhausted, 130 cancelled (docs/cli.md).',
    '',
  );
  return out.join('\n');
}
