import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPEC_MALLOC_ARENA_MAX, SPEC_V8_FLAGS } from './commands/v8-tuning.js';

const execFileAsync = promisify(execFile);
const LAUNCHER = fileURLToPath(new URL('../bin/allium-loop', import.meta.url));

/**
 * What the stand-in for the Node shim saw (its own file, its arguments, the variable), and whether Node itself read
 * the certificates the variable names: a file that does not exist makes Node warn on stderr as it starts.
 */
interface Seen {
  readonly script: string;
  /** Node's own options, before the script. */
  readonly execArgv: string[];
  readonly args: string[];
  readonly extraCerts: string | null;
  /** `MALLOC_ARENA_MAX` as the process saw it (null when unset). */
  readonly arenas: string | null;
  readonly nodeReadCerts: boolean;
}

// The launcher (bin/allium-loop) copied into a package of its own, next to stand-ins for the Node shim and the spec
// entry that report what they were started with. Real sh, real node from PATH, real symlinks as npm makes them.
describe('the launcher (bin/allium-loop)', () => {
  let root: string;
  let launcher: string;
  let shim: string;
  let specEntry: string;
  const report =
    'process.stdout.write(JSON.stringify({ script: process.argv[1], execArgv: process.execArgv, args: process.argv.slice(2), ' +
    'extraCerts: process.env.NODE_EXTRA_CA_CERTS ?? null, arenas: process.env.MALLOC_ARENA_MAX ?? null }));\n';

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'allium-loop-launcher-')));
    const bin = join(root, 'store', 'allium-loop', 'bin');
    await mkdir(bin, { recursive: true });
    launcher = join(bin, 'allium-loop');
    shim = join(bin, 'allium-loop.js');
    await copyFile(LAUNCHER, launcher);
    await chmod(launcher, 0o755);
    await writeFile(shim, report);
    await mkdir(join(root, 'store', 'allium-loop', 'dist'));
    specEntry = join(root, 'store', 'allium-loop', 'dist', 'spec-loader.cjs');
    await writeFile(specEntry, report);
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function launch(command: string, args: string[], env: Record<string, string> = {}): Promise<Seen> {
    const { stdout, stderr } = await execFileAsync(command, args, {
      env: { PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`, ...env },
    });
    const nodeReadCerts = /^Warning: Ignoring extra certs from `[^`]*`, load failed/.test(stderr);
    expect(stderr.replace(/^Warning: Ignoring extra certs from .*\n/, '')).toBe('');
    const seen = JSON.parse(stdout) as Omit<Seen, 'nodeReadCerts'>;
    return { ...seen, script: await realpath(seen.script), nodeReadCerts };
  }

  it('starts `spec` on the spec entry without NODE_EXTRA_CA_CERTS, passing every argument through untouched', async () => {
    // Arguments a shell would split, expand or drop if the launcher ever let it.
    const awkward = ['check', '--json', 'a spec.allium', '$HOME', '*', '', "it's", '"q"', '-- x', '\\n'];
    const seen = await launch(launcher, ['spec', ...awkward], { NODE_EXTRA_CA_CERTS: '/no/such/ca.pem' });
    expect(seen).toEqual({
      script: specEntry,
      // The V8 flags spec runs with, on Node's command line (the young generation's size is read only there).
      execArgv: [...SPEC_V8_FLAGS],
      args: ['spec', ...awkward],
      extraCerts: null,
      arenas: SPEC_MALLOC_ARENA_MAX,
      nodeReadCerts: false,
    });
    // Unset already: nothing to take away, and nothing breaks.
    expect(await launch(launcher, ['spec', 'check'])).toEqual({
      script: specEntry,
      execArgv: [...SPEC_V8_FLAGS],
      args: ['spec', 'check'],
      extraCerts: null,
      arenas: SPEC_MALLOC_ARENA_MAX,
      nodeReadCerts: false,
    });
  });

  it('starts `spec` with one malloc arena unless the user set their own limit, and no other command with it', async () => {
    expect((await launch(launcher, ['spec', 'check'], { MALLOC_ARENA_MAX: '4' })).arenas).toBe('4');
    // Set but empty is unset to glibc: the launcher's own limit then.
    expect((await launch(launcher, ['spec', 'check'], { MALLOC_ARENA_MAX: '' })).arenas).toBe(
      SPEC_MALLOC_ARENA_MAX,
    );
    expect((await launch(launcher, ['run', 'goal'], { MALLOC_ARENA_MAX: '4' })).arenas).toBe('4');
    expect((await launch(launcher, ['run', 'goal'])).arenas).toBeNull();
  });

  it('starts `spec` on the shim when the spec entry is not built, still without NODE_EXTRA_CA_CERTS', async () => {
    const bin = join(root, 'unbuilt', 'bin');
    await mkdir(bin, { recursive: true });
    await copyFile(LAUNCHER, join(bin, 'allium-loop'));
    await chmod(join(bin, 'allium-loop'), 0o755);
    await writeFile(join(bin, 'allium-loop.js'), report);
    expect(
      await launch(join(bin, 'allium-loop'), ['spec', 'check'], { NODE_EXTRA_CA_CERTS: '/no/such/ca.pem' }),
    ).toEqual({
      script: join(bin, 'allium-loop.js'),
      execArgv: [],
      args: ['spec', 'check'],
      extraCerts: null,
      arenas: SPEC_MALLOC_ARENA_MAX,
      nodeReadCerts: false,
    });
  });

  it('starts every other command on the shim with NODE_EXTRA_CA_CERTS as it is', async () => {
    const env = { NODE_EXTRA_CA_CERTS: '/no/such/ca.pem' };
    for (const args of [['run', 'spec'], ['--help'], ['resume'], ['specs', 'check'], ['--', 'spec'], []])
      expect(await launch(launcher, args, env)).toEqual({
        script: shim,
        execArgv: [],
        args,
        extraCerts: '/no/such/ca.pem',
        arenas: null,
        nodeReadCerts: true,
      });
  });

  it('finds its package through symlinks as npm links a bin, and by name on PATH', async () => {
    // npm: node_modules/.bin/allium-loop -> ../allium-loop/bin/allium-loop, where node_modules/allium-loop may itself
    // be a link (a workspace, or a global install's prefix), and the user's own link on top of that.
    const project = join(root, 'project');
    await mkdir(join(project, 'node_modules', '.bin'), { recursive: true });
    await symlink(join(root, 'store', 'allium-loop'), join(project, 'node_modules', 'allium-loop'));
    const dotBin = join(project, 'node_modules', '.bin', 'allium-loop');
    await symlink('../allium-loop/bin/allium-loop', dotBin);
    const mine = join(root, 'mine', 'tools');
    await mkdir(mine, { recursive: true });
    await symlink(dotBin, join(mine, 'allium-loop'));
    await symlink('allium-loop', join(mine, 'al'));

    for (const command of [dotBin, join(mine, 'allium-loop'), join(mine, 'al')])
      expect(await launch(command, ['spec', 'check'], { NODE_EXTRA_CA_CERTS: '/no/such/x.pem' })).toEqual({
        script: specEntry,
        execArgv: [...SPEC_V8_FLAGS],
        args: ['spec', 'check'],
        extraCerts: null,
        arenas: SPEC_MALLOC_ARENA_MAX,
        nodeReadCerts: false,
      });
    const onPath = await launch('al', ['run', 'goal'], {
      PATH: `${mine}:${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
      NODE_EXTRA_CA_CERTS: '/no/such/x.pem',
    });
    expect(onPath).toEqual({
      script: shim,
      execArgv: [],
      args: ['run', 'goal'],
      extraCerts: '/no/such/x.pem',
      arenas: null,
      nodeReadCerts: true,
    });
  });
});
