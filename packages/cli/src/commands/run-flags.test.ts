import { access, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import {
  DEFAULT_PHASE_AGENTS,
  MAX_TIMEOUT_MS,
  PHASE_AGENT_CHOICES,
  PHASE_AGENT_KINDS,
} from '@allium-loop/agents';
import { ENTRY_POINTS } from '@allium-loop/entry';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { makeProject } from '../e2e/e2e.test-helpers.js';
import { runCli } from '../run-cli.js';
import { FlagError, MAX_TIMER_MS, parseRunFlags, RUN_FLAG_SCHEMA } from './run-flags.js';
import { agentFromFlags } from './run-options.js';

async function cli(args: readonly string[], cwd: string) {
  const io = createRecordingIo(cwd, { PATH: process.env['PATH'] });
  const code = await runCli(args, io, { version: '9.9.9' });
  return { code, out: io.out(), err: io.err() };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * The same bad flag, in each loop the one pipeline serves: the spec loop, a loop mode, and resume. The `{flag}`
 * words are replaced by the case's arguments.
 */
const LOOPS: readonly (readonly string[])[] = [
  ['run', 'add a thing', '{flag}'],
  ['run', 'make it pass', '--verify', 'true', '{flag}'],
  ['run', '--state-file', 'state/al.json', '{flag}'],
  ['resume', 'add-a-thing', '{flag}'],
];

const EDGES: readonly [string, readonly string[], RegExp][] = [
  ['an unknown flag', ['--frobnicate'], /Unknown option '--frobnicate'/],
  ['an unknown flag as --flag=value', ['--frobnicate=3'], /Unknown option '--frobnicate'/],
  ['a missing value at the end', ['--max-ticks'], /Option '--max-ticks <value>' argument missing/],
  ['a missing value before another flag', ['--max-ticks', '--json'], /'--max-ticks' argument is ambiguous/],
  ['an empty --flag=value', ['--max-ticks='], /--max-ticks needs a value, not ''/],
  ['an empty text value', ['--model='], /--model needs a value, not ''/],
  ['a value given to a switch', ['--json=yes'], /Option '--json' does not take an argument/],
  ['a repeated flag', ['--max-ticks', '3', '--max-ticks', '30'], /--max-ticks was given twice; give it once/],
  ['a repeated flag, once as --flag=value', ['--max-ticks=3', '--max-ticks', '3'], /--max-ticks was given/],
  ['a repeated switch, short and long', ['-q', '--quiet'], /--quiet was given twice \(-q and --quiet\)/],
  [
    'a value outside --phase-agents’ choices',
    ['--phase-agents', 'plugin'],
    /--phase-agents takes one of own, allium, not 'plugin'/,
  ],
  ['a zero count', ['--max-ticks', '0'], /--max-ticks takes a positive whole number, not '0'/],
  ['a negative count', ['--max-ticks=-2'], /--max-ticks takes a positive whole number, not '-2'/],
  ['a fractional count', ['--no-progress-ticks', '1.5'], /--no-progress-ticks takes a positive whole number/],
  ['a count past the safe integers', ['--max-ticks', '1e20'], /--max-ticks takes a positive whole number/],
  ['an infinite number', ['--budget-usd', '1e400'], /--budget-usd takes a positive number, not '1e400'/],
  ['a number that is not one', ['--budget-usd', '5usd'], /--budget-usd takes a positive number, not '5usd'/],
  ['a zero budget', ['--budget-usd', '0'], /--budget-usd takes a positive number, not '0'/],
  ['a timeout no timer can hold', ['--agent-timeout', '3000000'], /--agent-timeout 3000000 is longer than/],
  ['a wall clock no timer can hold', ['--wall-clock=9e9'], /--wall-clock 9000000000 is longer than/],
];

describe(
  'one flag pipeline: the same edge behaviour for run, every mode and resume',
  { timeout: 120_000 },
  () => {
    for (const [what, flag, message] of EDGES) {
      it(`${what}: exit 2, a clear message, nothing written`, async () => {
        const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n' });
        for (const loop of LOOPS) {
          const args = loop.flatMap((word) => (word === '{flag}' ? flag : [word]));
          const { code, out, err } = await cli(args, project);
          expect(err, args.join(' ')).toMatch(message);
          expect(err).toContain(`allium-loop ${args[0]!}: `);
          expect(err).toContain(`Run 'allium-loop ${args[0]!} --help' for the flags.`);
          expect(out).toBe('');
          expect(code).toBe(2);
          // Refused before anything starts: no state directory, no state file, no ledger.
          expect(await exists(join(project, '.allium-loop'))).toBe(false);
          expect(await exists(join(project, 'state'))).toBe(false);
        }
        expect(await readdir(project)).not.toContain('.allium-loop');
      });
    }

    it('a value outside a flag’s choices is named with the choices', async () => {
      const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n' });
      const entry = await cli(['run', 'g', '--entry', 'sideways'], project);
      expect(entry.err).toContain("--entry takes one of elicit, distill, tend, weed, not 'sideways'.");
      expect(entry.code).toBe(2);
      const drift = await cli(['resume', 'g', '--on-drift=maybe'], project);
      expect(drift.err).toContain("--on-drift takes one of reverify, reset, stop, not 'maybe'.");
      expect(drift.code).toBe(2);
      expect(await exists(join(project, '.allium-loop'))).toBe(false);
    });
  },
);

describe('parseRunFlags', () => {
  it('reads --flag=value and --flag value alike', () => {
    const joined = parseRunFlags(['g', '--max-ticks=4', '--agent=codex', '--json'], 'run');
    const spaced = parseRunFlags(['g', '--max-ticks', '4', '--agent', 'codex', '--json'], 'run');
    expect(joined.values).toEqual(spaced.values);
    expect(joined.values).toEqual({ 'max-ticks': '4', agent: 'codex', json: true });
    expect(joined.positionals).toEqual(['g']);
  });

  it('accepts the longest timer and a negative number written as --flag=value where numbers may be negative', () => {
    const most = String(Math.floor(MAX_TIMER_MS / 1000));
    expect(parseRunFlags(['g', '--agent-timeout', most], 'run').values['agent-timeout']).toBe(most);
    const climb = parseRunFlags(
      ['g', '--verify', 'x', '--hillclimb', '--score', '(\\d+)', '--target=-3'],
      'run',
    );
    expect(climb.values.target).toBe('-3');
  });

  it('throws FlagError, never another error, for bad input', () => {
    for (const [, flag] of EDGES) expect(() => parseRunFlags(['g', ...flag], 'run')).toThrow(FlagError);
  });

  it('the schema’s facts are the engine’s: entry points, the longest timer, phase agents', () => {
    expect(RUN_FLAG_SCHEMA.entry.choices).toEqual([...ENTRY_POINTS]);
    expect(MAX_TIMER_MS).toBe(MAX_TIMEOUT_MS);
    expect(RUN_FLAG_SCHEMA['phase-agents'].choices).toEqual([...PHASE_AGENT_CHOICES]);
    expect(RUN_FLAG_SCHEMA['phase-agents'].default).toBe(DEFAULT_PHASE_AGENTS);
    expect(PHASE_AGENT_KINDS).toEqual(['claude']);
  });
});

describe('--phase-agents', { timeout: 120_000 }, () => {
  const flags = (args: readonly string[]) => parseRunFlags(['g', ...args], 'run').values;

  it('sets phaseAgents on the claude agent: the default agent, --agent claude, or the config file’s claude', () => {
    expect(agentFromFlags(flags(['--phase-agents', 'allium']), undefined, '/p')).toEqual({
      kind: 'claude',
      phaseAgents: 'allium',
    });
    expect(agentFromFlags(flags(['--agent', 'claude', '--phase-agents=own']), undefined, '/p')).toEqual({
      kind: 'claude',
      phaseAgents: 'own',
    });
    // The flag overrides the config file's setting and keeps the rest of it.
    const configured = { kind: 'claude', model: 'opus', phaseAgents: 'own' } as const;
    expect(agentFromFlags(flags(['--phase-agents', 'allium']), configured, '/p')).toEqual({
      ...configured,
      phaseAgents: 'allium',
    });
    // Not given: the config file's setting stands.
    expect(agentFromFlags(flags([]), configured, '/p')).toEqual(configured);
  });

  it('own is what every other agent does anyway: accepted, nothing set', () => {
    expect(agentFromFlags(flags(['--agent', 'codex', '--phase-agents', 'own']), undefined, '/p')).toEqual({
      kind: 'codex',
    });
  });

  it.each([
    [['--agent', 'codex'], /the agent is codex \(--agent\), which has none/],
    [['--agent', 'opencode'], /the agent is opencode \(--agent\), which has none/],
    [['--agent-command', 'node a.mjs {prompt_file}'], /the agent is command \(--agent-command\)/],
  ])('allium with %j is a usage error', (agent, message) => {
    const values = flags([...agent, '--phase-agents', 'allium']);
    expect(() => agentFromFlags(values, undefined, '/p')).toThrow(FlagError);
    expect(() => agentFromFlags(values, undefined, '/p')).toThrow(message);
    expect(() => agentFromFlags(values, undefined, '/p')).toThrow(
      "--phase-agents allium needs an agent that has the Allium plugin's agents (claude)",
    );
  });

  it('allium for an agent without plugin agents: exit 2 on run and resume, nothing written', async () => {
    const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n' });
    for (const args of [
      ['run', 'add a thing', '--agent', 'gemini', '--phase-agents', 'allium'],
      ['resume', 'add-a-thing', '--agent', 'codex', '--phase-agents', 'allium'],
    ]) {
      const { code, out, err } = await cli(args, project);
      expect(err, args.join(' ')).toMatch(
        /--phase-agents allium needs an agent that has the Allium plugin's agents/,
      );
      expect(out).toBe('');
      expect(code).toBe(2);
    }
    // The config file's agent counts as well.
    await writeFile(join(project, 'allium-loop.yaml'), 'agent:\n  kind: aider\n');
    const configured = await cli(['run', 'add a thing', '--phase-agents', 'allium'], project);
    expect(configured.err).toMatch(/the agent is aider \(allium-loop.yaml\), which has none/);
    expect(configured.code).toBe(2);
    expect(await exists(join(project, '.allium-loop'))).toBe(false);
  });

  it('belongs to the spec loop: refused with a loop mode', async () => {
    const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n' });
    const { code, err } = await cli(['run', 'g', '--verify', 'true', '--phase-agents', 'allium'], project);
    expect(err).toContain('--phase-agents belongs to the spec loop; it does not apply with --verify.');
    expect(code).toBe(2);
    expect(await exists(join(project, '.allium-loop'))).toBe(false);
  });

  it('is listed in run and resume help with its default', async () => {
    const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n' });
    for (const command of ['run', 'resume']) {
      const { out } = await cli([command, '--help'], project);
      expect(out).toMatch(/--phase-agents own\|allium.*\(default: own\)/s);
    }
  });
});

describe('the /al arguments after --state-file are flags of the one schema', () => {
  it('workdir= is --state-file <dir>/.al-state.json and max= is --max-ticks; other words stay the goal', () => {
    const parsed = parseRunFlags(['list the fruits', '--state-file', 'workdir=work', 'max=5'], 'run');
    expect(parsed.loop).toBe('state-file');
    expect(parsed.positionals).toEqual(['list the fruits']);
    expect(parsed.values).toMatchObject({ 'state-file': join('work', '.al-state.json'), 'max-ticks': '5' });
    // Outside --state-file such words are nothing special: the goal of another loop.
    expect(parseRunFlags(['max=5'], 'run').positionals).toEqual(['max=5']);
  });

  const BAD_AL: readonly [string, readonly string[], string][] = [
    ['a zero max=', ['max=0'], "max= takes a positive whole number, not '0'."],
    ['a max= that is no number', ['max=two'], "max= takes a positive whole number, not 'two'."],
    ['a fractional max=', ['max=2.5'], "max= takes a positive whole number, not '2.5'."],
    ['an empty max=', ['max='], "max= takes a positive whole number, not ''."],
    ['an empty workdir=', ['workdir='], "workdir= needs a directory, not ''."],
    ['max= given twice', ['max=3', 'max=4'], 'max= was given twice; give it once.'],
    ['workdir= given twice', ['workdir=a', 'workdir=b'], 'workdir= was given twice; give it once.'],
    [
      'max= beside --max-ticks',
      ['max=3', '--max-ticks', '4'],
      'max= is the tick cap; give it or --max-ticks, not both.',
    ],
    [
      'max= beside --max-iterations',
      ['max=3', '--max-iterations', '3'],
      'max= is the tick cap; give it or --max-iterations, not both.',
    ],
    [
      'workdir= beside a --state-file path',
      ['--state-file=state/al.json', 'workdir=work'],
      'workdir= names the directory of .al-state.json; give it or a --state-file path, not both.',
    ],
  ];

  for (const [what, words, message] of BAD_AL)
    it(`${what}: exit 2, a clear message, nothing written`, async () => {
      const args = [
        'run',
        'list the fruits',
        ...(words[0]?.startsWith('--state-file') ? [] : ['--state-file']),
        ...words,
      ];
      expect(() => parseRunFlags(args.slice(1), 'run')).toThrow(FlagError);
      const project = await makeProject({ 'README.md': 'fruits\n' });
      const { code, out, err } = await cli([...args, '--agent-command', 'true'], project);
      expect(err).toContain(`allium-loop run: ${message}`);
      expect(out).toBe('');
      expect(code).toBe(2);
      // Refused before anything starts: no state directory, no state file anywhere.
      expect((await readdir(project)).sort()).toEqual(['.git', 'README.md']);
      expect(await exists(join(project, 'work'))).toBe(false);
    });
});
