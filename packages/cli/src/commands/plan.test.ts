import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRecordingIo } from '../cli-io.js';
import { planCommand } from './plan.js';

/** Orders are placed, and an invoice is issued when an order is created: two lifecycles, Order first. */
const SHOP = `-- allium: 3

entity Order {
    status: placed | invoiced
}

entity Invoice {
    order: Order
}

rule PlaceOrder {
    when: PlaceOrder(customer)
    ensures: Order.created(status: placed)
}

rule IssueInvoice {
    when: order: Order.created
    ensures: Invoice.created(order: order)
}
`;

async function project(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cli-plan-'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), text);
  }
  return root;
}

const git = async (cwd: string, ...args: string[]) =>
  (await promisify(execFile)('git', args, { cwd })).stdout;

async function plan(cwd: string, args: string[]) {
  const io = createRecordingIo(cwd);
  const code = await planCommand().run(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('allium-loop plan', () => {
  it('reads every spec under the directory and prints the plan as text', async () => {
    const cwd = await project({ 'spec/shop.allium': SHOP, 'node_modules/x/y.allium': 'not a spec {' });
    const { code, out, err } = await plan(cwd, []);
    expect(code).toBe(0);
    expect(err).toBe('');
    expect(out).toContain('Spec: spec/shop.allium\nPlan: 2 slices in 2 waves, then the integration pass.\n');
    expect(out).toContain(
      '  entity-lifecycle:Invoice (entity lifecycle, 2 constructs) — after entity-lifecycle:Order',
    );
  });

  it('prints JSON with --json and a Mermaid flowchart with --mermaid', async () => {
    const cwd = await project({ 'shop.allium': SHOP });
    const json = JSON.parse((await plan(cwd, ['--json'])).out) as {
      specFiles: string[];
      entry: null;
      plan: { waves: string[][] };
    };
    expect(json.specFiles).toEqual(['shop.allium']);
    expect(json.entry).toBeNull();
    expect(json.plan.waves).toEqual([['entity-lifecycle:Order'], ['entity-lifecycle:Invoice']]);
    expect((await plan(cwd, ['--mermaid'])).out).toMatch(/^flowchart LR\n/);
  });

  it('with --goal, starts with the entry announcement for that goal', async () => {
    const cwd = await project({ 'shop.allium': SHOP, 'src/orders.ts': 'export {}\n' });
    const { code, out } = await plan(cwd, ['--goal', 'add gift cards to checkout']);
    expect(code).toBe(0);
    expect(out.split('\n')[0]).toBe(
      'Starting with tend (spec-first): spec present and the goal adds behaviour (cues: "add"). ' +
        'Override with --entry elicit|distill|weed.',
    );
    const json = JSON.parse(
      (await plan(cwd, ['--json', '--goal', 'document how orders work today'])).out,
    ) as {
      entry: { entry: string };
    };
    expect(json.entry.entry).toBe('distill');
  });

  it('says clearly when there is no spec, and exits 1', async () => {
    const cwd = await project({ 'src/app.ts': '' });
    const { code, err } = await plan(cwd, []);
    expect(code).toBe(1);
    expect(err).toContain(`no .allium spec found under ${cwd}`);
  });

  it('warns on stderr when the spec has errors, and still plans what parsed', async () => {
    const cwd = await project({ 'shop.allium': `${SHOP}\nrule Broken {\n` });
    const { code, out, err } = await plan(cwd, []);
    expect(code).toBe(0);
    expect(err).toMatch(/the spec has \d+ errors?; the plan may be incomplete/);
    expect(out).toContain('entity-lifecycle:Order');
  });

  it('with --github-matrix prints one wave as a matrix, and --plan-out stores the plan for run --slice', async () => {
    const cwd = await project({ 'shop.allium': SHOP });
    const first = await plan(cwd, ['--github-matrix']);
    expect(first.code).toBe(0);
    // One line: it goes into $GITHUB_OUTPUT as wave1=<json>.
    expect(first.out).toBe(
      '{"include":[{"wave":1,"slice":"entity-lifecycle:Order","key":"entity-lifecycle-Order"}]}\n',
    );
    expect(JSON.parse((await plan(cwd, ['--github-matrix', '--wave', '2'])).out)).toEqual({
      include: [{ wave: 2, slice: 'entity-lifecycle:Invoice', key: 'entity-lifecycle-Invoice' }],
    });
    expect((await plan(cwd, ['--github-matrix', '--wave', '3'])).out).toBe('{"include":[]}\n');
    const stored = await plan(cwd, ['--goal', 'invoices', '--plan-out', 'out/plan.json']);
    expect(stored.code).toBe(0);
    expect(stored.out).toContain('Plan: 2 slices in 2 waves');
    const file = JSON.parse(await readFile(join(cwd, 'out', 'plan.json'), 'utf8')) as {
      goal: string;
      waves: number;
      slices: { id: string; wave: number }[];
    };
    expect(file.goal).toBe('invoices');
    expect(file.waves).toBe(2);
    expect(file.slices.map((s) => [s.id, s.wave])).toEqual([
      ['entity-lifecycle:Order', 1],
      ['entity-lifecycle:Invoice', 2],
      ['integration', 3],
    ]);
  });

  it.each([
    [['--json', '--mermaid'], '--json and --mermaid cannot be used together'],
    [['--json', '--github-matrix'], '--json and --github-matrix cannot be used together'],
    [['--wave', '2'], '--wave goes with --github-matrix'],
    [['--github-matrix', '--wave', '0'], "--wave takes a wave number from 1, not '0'"],
    [['--github-matrix', '--wave', '1.5'], "--wave takes a wave number from 1, not '1.5'"],
    [['--plan-out', 'plan.json'], '--plan-out needs --goal'],
    [['--frobnicate'], "Unknown option '--frobnicate'"],
    [['extra'], "unexpected argument 'extra'"],
    [['--goal', '  '], '--goal needs a non-empty goal'],
  ])('exits 2 on the usage error %j', async (args, message) => {
    const { code, err } = await plan(await project({ 'shop.allium': SHOP }), args);
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it('with --since, plans only what the spec change since that revision touched, as a run plans it', async () => {
    // The shop had orders; the change adds invoices. The whole spec has two slices, the change only one.
    const before =
      SHOP.slice(0, SHOP.indexOf('entity Invoice')) +
      SHOP.slice(SHOP.indexOf('rule PlaceOrder'), SHOP.indexOf('rule IssueInvoice'));
    const cwd = await project({ 'spec/shop.allium': before });
    await git(cwd, 'init', '--quiet');
    await git(cwd, 'add', '-A');
    await git(cwd, '-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '--quiet', '-m', 'orders');
    await writeFile(join(cwd, 'spec/shop.allium'), SHOP);
    const whole = JSON.parse((await plan(cwd, ['--json'])).out) as { plan: { slices: { id: string }[] } };
    expect(whole.plan.slices.map((s) => s.id)).toEqual([
      'entity-lifecycle:Order',
      'entity-lifecycle:Invoice',
    ]);
    const changed = await plan(cwd, ['--since', 'HEAD', '--json']);
    expect(changed.code, changed.err).toBe(0);
    const json = JSON.parse(changed.out) as { plan: { slices: { id: string; constructs: string[] }[] } };
    expect(json.plan.slices.map((s) => s.id)).toEqual(['entity-lifecycle:Invoice']);
    expect(json.plan.slices[0]!.constructs).toEqual(['entity:Invoice', 'rule:IssueInvoice']);
    // Nothing changed since the revision: nothing to plan, said plainly.
    await git(cwd, 'add', '-A');
    await git(
      cwd,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@localhost',
      'commit',
      '--quiet',
      '-m',
      'invoices',
    );
    const none = await plan(cwd, ['--since', 'HEAD']);
    expect(none.code).toBe(1);
    expect(none.err).toContain('the spec change since HEAD touches no construct; there is nothing to plan');
  });

  it('with --since, names a revision that does not exist and changes nothing', async () => {
    const cwd = await project({ 'spec/shop.allium': SHOP });
    await git(cwd, 'init', '--quiet');
    const { code, err, out } = await plan(cwd, [
      '--since',
      'no-such-branch',
      '--plan-out',
      'p.json',
      '--goal',
      'g',
    ]);
    expect(code).toBe(2);
    expect(err).toContain("'no-such-branch' does not name a commit");
    expect(err).toContain('--since origin/main');
    expect(out).toBe('');
    await expect(readFile(join(cwd, 'p.json'), 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(cwd, 'spec/shop.allium'), 'utf8')).toBe(SHOP);
  });

  it('prints its help with --help', async () => {
    const { code, out } = await plan(await project({}), ['--help']);
    expect(code).toBe(0);
    expect(out).toContain(
      'Usage: allium-loop plan [--goal "..."] [--since <rev>] [--json | --mermaid | --github-matrix [--wave N]] [--plan-out <file>]',
    );
  });
});
