// Start-up benchmark of the `allium-loop` command: how long the process takes for `--version` and for
// `spec check` of a 250-line spec, each against `node -e 0` on the same machine at the same moment.
// Runs are paired: every round starts the baseline and each command one after another (in a rotating order),
// so a busy moment of the shared machine hits all of them alike. Prints medians and the ratios to the baseline.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSpec } from '../spec/generate-spec.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const ROUNDS = Number(process.env['ROUNDS'] ?? 21);

const packaged = join(root, 'packages/cli/package/out/bin/allium-loop.js');
if (!existsSync(packaged) || process.argv.includes('--rebuild'))
  execFileSync(process.execPath, [join(root, 'packages/cli/package/build.mjs')], { stdio: 'inherit' });
const workspaceBin = join(root, 'packages/cli/bin/allium-loop.js');

const project = mkdtempSync(join(tmpdir(), 'allium-loop-startup-'));
const spec = generateSpec(250);
writeFileSync(join(project, 'spec.allium'), spec);
const specLines = spec.split('\n').length;

type Case = { name: string; args: string[] };
const cases: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'package: --version', args: [packaged, '--version'] },
  { name: 'package: spec check', args: [packaged, 'spec', 'check', 'spec.allium', '--json'] },
];
if (existsSync(join(root, 'packages/cli/dist/main.js')))
  cases.push(
    { name: 'workspace build: --version', args: [workspaceBin, '--version'] },
    { name: 'workspace build: spec check', args: [workspaceBin, 'spec', 'check', 'spec.allium', '--json'] },
  );

/** CPU time of waited-for children so far, in ms (Linux: cutime + cstime of /proc/self/stat, 10 ms ticks). */
function childCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

const cpu = new Map<string, number[]>();

function timeOnce(args: string[], name = ''): number {
  const cpuBefore = childCpuMs();
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  cpu.set(name, [...(cpu.get(name) ?? []), childCpuMs() - cpuBefore]);
  if (result.status !== 0 && !(args.includes('check') && result.status === 1))
    throw new Error(`${args.join(' ')} exited ${String(result.status)}: ${result.stderr.toString()}`);
  return ms;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

for (const c of cases) timeOnce(c.args); // warm the file cache
const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (let i = 0; i < cases.length; i += 1) {
    const c = cases[(round + i) % cases.length]!;
    times.get(c.name)!.push(timeOnce(c.args, c.name));
  }
}

const base = median(times.get('node -e 0')!);
const baseCpu = median(cpu.get('node -e 0')!);
console.log(
  `start-up, ${String(ROUNDS)} paired rounds, spec of ${String(specLines)} lines, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const c of cases) {
  const m = median(times.get(c.name)!);
  const c0 = median(cpu.get(c.name)!);
  console.log(
    `  ${c.name.padEnd(30)} median ${m.toFixed(0).padStart(5)} ms wall  ${(m / base).toFixed(2)}× node -e 0   cpu ${String(c0).padStart(4)} ms  ${(c0 / baseCpu).toFixed(2)}×`,
  );
}
const ratio = (name: string) => median(times.get(name)!) / base;
const version = ratio('package: --version');
const check = ratio('package: spec check');
console.log(
  `targets: --version ≤ 1.5× (${version.toFixed(2)}×: ${version <= 1.5 ? 'met' : 'NOT met'}), spec check ≤ 2× (${check.toFixed(2)}×: ${check <= 2 ? 'met' : 'NOT met'})`,
);
