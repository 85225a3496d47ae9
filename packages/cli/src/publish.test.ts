import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const BUILD = fileURLToPath(new URL('../package/build.mjs', import.meta.url));
const WORKSPACE = fileURLToPath(new URL('../../../', import.meta.url));

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Every file under `dir`, recursively. */
async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await files(path)));
    else out.push(path);
  }
  return out;
}

describe(
  'the published allium-loop package, installed from its tarball outside the workspace',
  { timeout: 600_000 },
  () => {
    let home: string;
    let bin: string;
    let installed: string;

    /** Runs the installed CLI in `cwd` with an environment that points nowhere near the workspace. */
    async function allium(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
      return run(bin, args, cwd, env);
    }

    async function run(
      command: string,
      args: string[],
      cwd: string,
      env: Record<string, string>,
    ): Promise<Ran> {
      try {
        const { stdout, stderr } = await exec(command, args, {
          cwd,
          // TMPDIR: the test run's own temporary directory (tools/vitest/temp-dir.mjs), so the demo's project goes
          // there and is removed with it, not left in /tmp.
          env: {
            PATH: process.env['PATH'] ?? '',
            HOME: home,
            TMPDIR: tmpdir(),
            FORCE_COLOR: '0',
            CI: 'true',
            ...env,
          },
        });
        return { code: 0, stdout, stderr };
      } catch (error) {
        const failed = error as Ran;
        return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
      }
    }

    beforeAll(async () => {
      const { stdout } = await exec(process.execPath, [BUILD, '--pack']);
      const tarball = stdout.trim().split('\n').at(-1)!;
      home = await mkdtemp(join(tmpdir(), 'allium-loop-install-'));
      await writeFile(join(home, 'package.json'), '{ "name": "user-project", "private": true }\n');
      // --offline: the package must install with no registry at all (it has no dependencies).
      await exec('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], {
        cwd: home,
        env: { ...process.env, npm_config_cache: join(home, '.npm') },
      });
      installed = join(home, 'node_modules', 'allium-loop');
      bin = join(home, 'node_modules', '.bin', 'allium-loop');
    }, 300_000);

    it('has no dependencies and nothing that points back into the workspace', async () => {
      const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(manifest['dependencies']).toBeUndefined();
      expect(manifest['private']).toBeUndefined();
      for (const file of await files(installed)) {
        if ((await stat(file)).size > 20_000_000) continue;
        expect(await readFile(file, 'utf8'), file).not.toContain(WORKSPACE);
      }
    });

    it('runs --version, demo, report, verify and spec check', async () => {
      const version = await allium(['--version'], home);
      expect(version).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^allium-loop \d+\.\d+\.\d+\n$/),
      });

      const demo = await allium(['demo'], home);
      expect(demo.stderr).toBe('');
      expect(demo.code).toBe(0);
      const hint = /try: cd (\S+) && .* report (\S+)/.exec(demo.stdout);
      expect(hint).not.toBeNull();
      const [, project, slug] = hint!;
      expect(project!.startsWith(WORKSPACE)).toBe(false);

      const report = await allium(['report', slug!], project!);
      expect(report.code).toBe(0);
      expect(report.stdout).toContain('converged');

      const verify = await allium(['verify'], project!);
      expect(verify.stdout).toMatch(/^converged$/m);
      expect(verify.code).toBe(0);

      const check = await allium(['spec', 'check'], project!);
      expect(check.stdout).toMatch(/1 file: 0 error\(s\)/);
      // As the reference checker: exit 1 on any warning (the demo's spec has some), 0 on a clean spec.
      expect(check.code).toBe(/ 0 warning\(s\)/.test(check.stdout) ? 0 : 1);
    });

    it('starts `spec` without reading NODE_EXTRA_CA_CERTS, and every other command as the environment says', async () => {
      // The installed command is npm's link to the launcher. A certificate file that does not exist makes Node warn as
      // it starts, so the warning shows whether Node read the variable.
      const spec = join(home, 'certs.allium');
      await writeFile(spec, '-- allium: 3\n\nentity Order {\n  total: Integer\n}\n');
      const env = { NODE_EXTRA_CA_CERTS: join(home, 'no-such-ca.pem') };
      const warning = /Warning: Ignoring extra certs from `[^`]*no-such-ca\.pem`/;
      const checked = await allium(['spec', 'check', '--json', spec], home, env);
      expect(checked.stderr).toBe('');
      expect(checked).toEqual(await allium(['spec', 'check', '--json', spec], home));
      for (const args of [['--help'], ['--version']])
        expect((await allium(args, home, env)).stderr).toMatch(warning);
    });

    it('runs spec with the code cache built with it, and answers the same without it or with a damaged one', async () => {
      const spec = join(home, 'orders.allium');
      await writeFile(
        spec,
        '-- allium: 3\n\nentity Order {\n  total: Integer\n  status: pending | shipped\n}\n\n' +
          'rule Ship {\n  when: ShipOrder(order)\n  requires: order.status = pending\n  ensures: order.status = shipped\n}\n',
      );
      const report = { ALLIUM_LOOP_CODE_CACHE: 'report' };
      const cached = await allium(['spec', 'check', '--json', spec], home, report);
      // The same Node that built the package runs it here, so V8 must take the cache; a rejected one only costs time,
      // which no other test would notice.
      expect(cached.stderr).toBe('code cache: accepted\n');
      // Through the Node shim, Node starts without the launcher's V8 flags and `spec` sets them at run time, which V8
      // counts as other flags: the shim takes its own cache (spec.cjs.shim.cache), and answers the same.
      const shim = [join(installed, 'bin', 'allium-loop.js'), 'spec', 'check', '--json', spec];
      expect(await run(process.execPath, shim, home, report)).toEqual(cached);
      const cache = join(installed, 'dist', 'spec.cjs.cache');
      const bytes = await readFile(cache);
      try {
        await writeFile(cache, Buffer.from(bytes.map((byte, i) => (i % 7 === 0 ? byte ^ 0xff : byte))));
        const damaged = await allium(['spec', 'check', '--json', spec], home, report);
        expect(damaged.stderr).toBe('code cache: rejected\n');
        expect({ ...damaged, stderr: '' }).toEqual({ ...cached, stderr: '' });
        await rm(cache);
        const absent = await allium(['spec', 'check', '--json', spec], home, report);
        expect(absent.stderr).toBe('code cache: absent\n');
        expect({ ...absent, stderr: '' }).toEqual({ ...cached, stderr: '' });
      } finally {
        await writeFile(cache, bytes);
      }
      // Without the variable nothing is said about the cache, and an ordinary run never writes it.
      expect((await allium(['spec', 'check', '--json', spec], home)).stderr).toBe('');
      expect((await allium(['spec', 'analyse', '--json', spec], home)).stderr).toBe('');
      expect(await readFile(cache)).toEqual(bytes);
    });
  },
);
