import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { DependencyGraph, GraphEdgeKind } from '@allium-loop/spec';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { planCommand, type SpecSource } from './plan.js';

const AT = { file: 'shop.allium', line: 1, col: 1 };

/** Two entities, one rule each, and a trigger from Order's rule to Invoice's: two slices in two waves. */
const GRAPH: DependencyGraph = {
  nodes: ['entity:Order', 'entity:Invoice', 'rule:PlaceOrder', 'rule:IssueInvoice'].map((id) => ({
    id,
    kind: id.startsWith('rule') ? 'rule' : 'entity',
    name: id.split(':')[1]!,
    location: AT,
  })),
  edges: (
    [
      ['rule:PlaceOrder', 'creates', 'entity:Order', 'Order'],
      ['rule:IssueInvoice', 'creates', 'entity:Invoice', 'Invoice'],
      ['rule:PlaceOrder', 'trigger', 'rule:IssueInvoice', 'OrderPlaced'],
    ] as [string, GraphEdgeKind, string, string][]
  ).map(([from, kind, to, via]) => ({ from, to, kind, via, evidence: { from: AT, to: AT } })),
};

async function project(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'cli-plan-'));
  for (const [file, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), text);
  }
  return root;
}

async function plan(cwd: string, args: string[], graph: DependencyGraph | null = GRAPH) {
  const seen: SpecSource[][] = [];
  const command = planCommand({
    analyze: async (sources) => {
      seen.push([...sources]);
      return graph ?? undefined;
    },
  });
  const io = createRecordingIo(cwd);
  const code = await command.run(args, io);
  return { code, out: io.out(), err: io.err(), seen };
}

describe('allium-loop plan', () => {
  it('reads every spec under the directory and prints the plan as text', async () => {
    const cwd = await project({ 'spec/shop.allium': 'entity Order {}\n', 'node_modules/x/y.allium': 'no' });
    const { code, out, seen } = await plan(cwd, []);
    expect(code).toBe(0);
    expect(seen).toEqual([[{ file: 'spec/shop.allium', text: 'entity Order {}\n' }]]);
    expect(out).toContain('Spec: spec/shop.allium\nPlan: 2 slices in 2 waves, then the integration pass.\n');
    expect(out).toContain(
      '  entity-lifecycle:Invoice (entity lifecycle, 2 constructs) — after entity-lifecycle:Order',
    );
  });

  it('prints JSON with --json and a Mermaid flowchart with --mermaid', async () => {
    const cwd = await project({ 'shop.allium': '' });
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
    const cwd = await project({ 'shop.allium': '', 'src/orders.ts': 'export {}\n' });
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
    const { code, err, seen } = await plan(cwd, []);
    expect(code).toBe(1);
    expect(err).toContain(`no .allium spec found under ${cwd}`);
    expect(seen).toEqual([]);
  });

  it('exits 1 with a message when no graph builder is available', async () => {
    const cwd = await project({ 'shop.allium': '' });
    const { code, err } = await plan(cwd, [], null);
    expect(code).toBe(1);
    expect(err).toContain('cannot build the spec dependency graph');
  });

  it.each([
    [['--json', '--mermaid'], '--json and --mermaid cannot be used together'],
    [['--frobnicate'], "Unknown option '--frobnicate'"],
    [['extra'], "unexpected argument 'extra'"],
    [['--goal', '  '], '--goal needs a non-empty goal'],
  ])('exits 2 on the usage error %j', async (args, message) => {
    const { code, err } = await plan(await project({ 'shop.allium': '' }), args);
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it('prints its help with --help', async () => {
    const { code, out } = await plan(await project({}), ['--help']);
    expect(code).toBe(0);
    expect(out).toContain('Usage: allium-loop plan [--goal "..."] [--json | --mermaid]');
  });
});
