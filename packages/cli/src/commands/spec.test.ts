import { mkdtemp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkReports, referenceJson } from '@allium-loop/allium';
import { createRecordingIo } from '../cli-io.js';
import { plainOptions, SPEC_ARGS, specCommand } from './spec.js';

const GOOD = `-- allium: 3
entity Order {
  status: open | closed
}
rule Close {
  when: CloseOrder(order)
  requires: order.status = open
  ensures: order.status = closed
}
surface Desk {
  context order: Order
  provides: CloseOrder(order)
}
open question "Refunds?"
`;

const BROKEN = `-- allium: 3
rule Broken {
  ensures: Ghost.created(x: 1)
}
`;

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spec-cli-'));
  await mkdir(join(dir, 'specs'));
  await writeFile(join(dir, 'specs', 'good.allium'), GOOD);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const run = async (...args: string[]) => {
  const io = createRecordingIo(dir);
  const code = await specCommand.run(args, io);
  return { code, out: io.out(), err: io.err() };
};

describe('allium-loop spec', () => {
  it('check prints file:line:col severity code message and exits 0 without errors or warnings', async () => {
    await mkdir(join(dir, 'clean'));
    await writeFile(
      join(dir, 'clean', 'c.allium'),
      '-- allium: 3\nrule Tick {\n  when: Ping(x)\n  ensures: Ping(x)\n}\n',
    );
    const { code, out } = await run('check', 'clean');
    expect(code).toBe(0);
    expect(out).toBe('1 file: 0 error(s), 0 warning(s), 0 info(s)\n');
  });

  it('check exits 1 on a warning alone, as the reference does; infos do not count', async () => {
    const { code, out } = await run('check');
    expect(code).toBe(1);
    expect(out).toBe(
      "specs/good.allium:3:11 warning allium.status.unreachableValue Status 'open' in entity 'Order' is never assigned by any rule ensures clause.\n" +
        '1 file: 0 error(s), 1 warning(s), 0 info(s)\n',
    );
  });

  it('check --json prints one reference-shaped object per file, keys sorted', async () => {
    await writeFile(join(dir, 'specs', 'broken.allium'), BROKEN);
    const { code, out } = await run('check', '--json', 'specs');
    expect(code).toBe(1);
    const documents = out
      .split(/(?<=^\})\n/m)
      .filter((d) => d.trim() !== '')
      .map((d) => JSON.parse(d) as Record<string, unknown>);
    expect(documents.map((d) => [d['command'], d['spec_file'], d['findings']]).sort()).toEqual([
      ['check', 'specs/broken.allium', []],
      ['check', 'specs/good.allium', []],
    ]);
    expect(Object.keys(documents[0] ?? {})).toEqual(['command', 'diagnostics', 'findings', 'spec_file']);
  });

  it('reads a spec as UTF-8 whether or not it holds bytes outside ASCII (an ASCII file takes the Latin-1 decoder), and refuses one that is not UTF-8', async () => {
    const spec = (path: string): string => `-- allium: 3\nuse "${path}" as other\n`;
    const message = (path: string): string =>
      `Use path "${path}" does not resolve to a file in the current check set.`;
    // Two bytes of UTF-8 for é, three for €, four for 𝄞; a lone 0xff is no UTF-8 at all.
    await writeFile(join(dir, 'utf8.allium'), spec('./café-€-𝄞.allium'));
    await writeFile(join(dir, 'ascii.allium'), spec('./cafe.allium'));
    const invalid = Buffer.concat([
      Buffer.from('-- allium: 3\nuse "./caf'),
      Buffer.from([0xff]),
      Buffer.from('.allium" as other\n'),
    ]);
    await writeFile(join(dir, 'invalid.allium'), invalid);
    const messages = async (file: string): Promise<string[]> => {
      const { out } = await run('check', '--json', file);
      const report = JSON.parse(out) as { diagnostics: { message: string; location: { col: number } }[] };
      return report.diagnostics.map((d) => `${d.location.col} ${d.message}`);
    };
    // The reference quotes a use path's UTF-8 bytes one character each (string-literal.ts): had the file been decoded
    // as Latin-1, each of those bytes would come out as two characters here.
    const asBytes = (text: string): string => String.fromCharCode(...Buffer.from(text, 'utf8'));
    expect(await messages('utf8.allium')).toEqual([`5 ${message(asBytes('./café-€-𝄞.allium'))}`]);
    expect(await messages('ascii.allium')).toEqual([`5 ${message('./cafe.allium')}`]);
    // Not UTF-8: refused as the reference refuses it (no report, exit 1), the other files still checked.
    const refused = await run('check', '--json', 'invalid.allium', 'ascii.allium');
    expect(refused.code).toBe(1);
    expect(refused.err).toBe("allium-loop spec check: cannot read 'invalid.allium': it is not UTF-8 text\n");
    expect((JSON.parse(refused.out) as { spec_file: string }).spec_file).toBe('ascii.allium');
    expect(await readFile(join(dir, 'invalid.allium'))).toEqual(invalid);
  });

  it('reads files and folders whose names are not UTF-8, named with U+FFFD as the reference names them; two names it cannot tell apart are refused', async () => {
    // `odd/sub\xfe/caf\xff.allium` and `odd/b\xff.allium`: legal names on Linux, which Node hands over with U+FFFD.
    const odd = Buffer.from(join(dir, 'odd'));
    await mkdir(odd);
    await mkdir(Buffer.concat([odd, Buffer.from('/sub'), Buffer.from([0xfe])]));
    const caf = Buffer.concat([
      odd,
      Buffer.from('/sub'),
      Buffer.from([0xfe]),
      Buffer.from('/caf'),
      Buffer.from([0xff]),
    ]);
    await writeFile(Buffer.concat([caf, Buffer.from('.allium')]), GOOD);
    await writeFile(
      Buffer.concat([odd, Buffer.from('/b'), Buffer.from([0xff]), Buffer.from('.allium')]),
      BROKEN,
    );
    const folder = await run('check', '--json', 'odd');
    expect(folder.err).toBe('');
    const names = ['odd/sub\uFFFD/caf\uFFFD.allium', 'odd/b\uFFFD.allium'];
    const expected = (name: string): string =>
      `${referenceJson(checkReports([{ path: name, text: name.startsWith('odd/b') ? BROKEN : GOOD }], 'check').reports[0])}\n`;
    expect(new Set(folder.out.split(/(?<=^\})\n/m).filter((d) => d.trim() !== ''))).toEqual(
      new Set(names.map((name) => expected(name).trimEnd())),
    );
    // Named on the command line (where the reference panics on an argument that is not UTF-8).
    const named = await run('check', '--json', names[0] as string);
    expect(named.out).toBe(expected(names[0] as string));
    // A second name that differs only in its stray byte: the string names either, so neither is read.
    await writeFile(
      Buffer.concat([odd, Buffer.from('/b'), Buffer.from([0xfe]), Buffer.from('.allium')]),
      GOOD,
    );
    const twins = await run('check', '--json', 'odd');
    expect(twins.code).toBe(1);
    expect(twins.err).toBe(
      "allium-loop spec check: cannot read 'odd/b\uFFFD.allium'\nallium-loop spec check: cannot read 'odd/b\uFFFD.allium'\n",
    );
  });

  it('keeps a byte order mark in the text, so it hides the version marker as in the reference', async () => {
    await writeFile(join(dir, 'bom.allium'), '\uFEFF-- allium: 3\nentity A {\n    n: Integer\n}\n');
    const { out } = await run('check', '--json', 'bom.allium');
    const report = JSON.parse(out) as { diagnostics: { message: string; location: { line: number } }[] };
    // The reference's first answer for this file: the marker is not read on line 1.
    expect(report.diagnostics[0]?.location.line).toBe(1);
    expect(report.diagnostics[0]?.message).toBe(
      "missing version marker; expected '-- allium: 1' as the first line",
    );
  });

  it('check --json prints files in the order they are named, a file named twice twice, a folder’s files in the file system’s order (the reference’s)', async () => {
    await writeFile(join(dir, 'specs', 'broken.allium'), BROKEN);
    await writeFile(join(dir, 'alone.allium'), GOOD);
    for (const name of ['zeta', 'alpha', 'mid', 'beta', 'omega'])
      await writeFile(join(dir, 'specs', `${name}.allium`), GOOD);
    await mkdir(join(dir, 'specs', 'inner'));
    await writeFile(join(dir, 'specs', 'inner', 'deep.allium'), GOOD);
    await writeFile(join(dir, 'specs', 'notes.txt'), 'not a spec');
    await writeFile(join(dir, 'specs', '.allium'), GOOD);
    const files = async (...paths: string[]): Promise<unknown[]> =>
      (await run('check', '--json', ...paths)).out
        .split(/(?<=^\})\n/m)
        .filter((d) => d.trim() !== '')
        .map((d) => (JSON.parse(d) as Record<string, unknown>)['spec_file']);
    // What `ls -U` (unsorted: readdir(3)'s order, which the reference's std::fs::read_dir walk follows) lists, depth
    // first, a folder's files where the folder is; a file called `.allium` alone has no extension to Rust's `Path`.
    const listed = (folder: string): string[] =>
      execFileSync('ls', ['-U', '-A', join(dir, folder)], { encoding: 'utf8' })
        .split('\n')
        .filter((name) => name !== '')
        .flatMap((name) =>
          name === 'inner'
            ? listed(`${folder}/inner`)
            : name.endsWith('.allium') && name !== '.allium'
              ? [`${folder}/${name}`]
              : [],
        );
    const folder = listed('specs');
    expect([...folder].sort()).toEqual(
      ['alpha', 'beta', 'broken', 'good', 'inner/deep', 'mid', 'omega', 'zeta'].map(
        (f) => `specs/${f}.allium`,
      ),
    );
    expect(await files('specs/good.allium', 'alone.allium', 'specs')).toEqual([
      'specs/good.allium',
      'alone.allium',
      ...folder,
    ]);
    expect(await files('alone.allium', './alone.allium', 'alone.allium')).toEqual([
      'alone.allium',
      './alone.allium',
      'alone.allium',
    ]);
    // The engine's own commands list a folder sorted, and a file named twice once.
    const questions = (await run('questions', 'specs', './specs/good.allium')).out;
    expect(questions.split('\n').filter((line) => line.includes('Refunds?'))).toEqual(
      ['alpha', 'beta', 'good', 'inner/deep', 'mid', 'omega', 'zeta'].map(
        (f) => `specs/${f}.allium:14:1 Refunds?`,
      ),
    );
  });

  it('check --json names each file as it was given, a folder’s files under the folder as given; imports resolve alike', async () => {
    // What the reference `allium check` 3.5.3 printed for the same two files named these ways: the file names as
    // given, `b/Thing` resolved through `./inner/b.allium` (no undefined reference, only `Unused` unused), and
    // only the missing import unresolved.
    await mkdir(join(dir, 'sub', 'inner'), { recursive: true });
    await writeFile(
      join(dir, 'sub', 'a.allium'),
      '-- allium: 3\nuse "./inner/b.allium" as b\nuse "./missing.allium" as m\n\nentity Order {\n    item: b/Thing\n}\n\nrule Place {\n    when: Go(o)\n    ensures: Order.created()\n}\n',
    );
    await writeFile(
      join(dir, 'sub', 'inner', 'b.allium'),
      '-- allium: 3\nentity Thing {\n    name: String\n}\nentity Unused {\n    name: String\n}\n',
    );
    const named = async (...paths: string[]) => {
      const { out } = await run('check', '--json', ...paths);
      return out
        .split(/(?<=^\})\n/m)
        .filter((d) => d.trim() !== '')
        .map(
          (d) =>
            JSON.parse(d) as {
              spec_file: string;
              diagnostics: { code: string; location: { file: string } }[];
            },
        )
        .map((d) => ({
          file: d.spec_file,
          codes: d.diagnostics.map((x) => x.code).sort(),
          located: [...new Set(d.diagnostics.map((x) => x.location.file))],
        }));
    };
    const expected = (a: string, b: string) => [
      {
        file: a,
        codes: ['allium.field.unused', 'allium.rule.unreachableTrigger', 'allium.use.unresolvedPath'],
        located: [a],
      },
      {
        file: b,
        codes: ['allium.entity.unused', 'allium.field.unused', 'allium.field.unused'],
        located: [b],
      },
    ];
    expect(await named('sub')).toEqual(expected('sub/a.allium', 'sub/inner/b.allium'));
    expect(await named('./sub')).toEqual(expected('./sub/a.allium', './sub/inner/b.allium'));
    expect(await named('sub/')).toEqual(expected('sub/a.allium', 'sub/inner/b.allium'));
    expect(await named(join(dir, 'sub'))).toEqual(
      expected(join(dir, 'sub', 'a.allium'), join(dir, 'sub', 'inner', 'b.allium')),
    );
    expect(await named('./sub/a.allium', 'sub//inner/b.allium')).toEqual(
      expected('./sub/a.allium', 'sub//inner/b.allium'),
    );
    // One file however it is named, as the reference keys its check set by the real path: a relative and an absolute
    // name, a name through a symbolic link, and both names of one file at once (each reported, both used by `a`).
    const absoluteB = join(dir, 'sub', 'inner', 'b.allium');
    expect(await named('sub/a.allium', absoluteB)).toEqual(expected('sub/a.allium', absoluteB));
    await symlink(join(dir, 'sub'), join(dir, 'link'));
    expect(await named('link/a.allium', 'sub/inner/b.allium')).toEqual(
      expected('link/a.allium', 'sub/inner/b.allium'),
    );
    expect(await named('sub/a.allium', 'sub/inner/b.allium', 'link/inner/b.allium')).toEqual([
      ...expected('sub/a.allium', 'sub/inner/b.allium'),
      ...expected('', 'link/inner/b.allium').slice(1),
    ]);
  });

  it('check --json prints a big report in pieces that end at line breaks, together exactly the reference JSON', async () => {
    // 3,000 unused entities: a report of well over a megabyte, written in pieces (see printJson).
    const entities = Array.from({ length: 3_000 }, (_, i) => `entity Unused${i} {\n  note: String\n}\n`);
    await mkdir(join(dir, 'big'));
    await writeFile(join(dir, 'big', 'big.allium'), `-- allium: 3\n${entities.join('')}`);
    const io = createRecordingIo(dir);
    const pieces: string[] = [];
    const code = await specCommand.run(['check', '--json', 'big'], {
      ...io,
      stdout: (text) => {
        pieces.push(text);
        io.stdout(text);
      },
    });
    expect(code).toBe(1);
    const text = pieces.join('');
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.every((piece) => piece.endsWith('\n') && piece.length < 70 * 1024)).toBe(true);
    const [report] = checkReports(
      [{ path: join('big', 'big.allium'), text: `-- allium: 3\n${entities.join('')}` }],
      'check',
    ).reports;
    expect(text).toBe(`${referenceJson(report)}\n`);
  });

  it('analyse exits 1 only on findings, model prints the domain model, and no file is exit 2', async () => {
    const clean = await run('analyse', '--json');
    expect(clean.code).toBe(0);
    await writeFile(join(dir, 'specs', 'good.allium'), GOOD.replace('  provides: CloseOrder(order)\n', ''));
    const found = await run('analyse', '--json');
    expect(found.code).toBe(1);
    const findings = (JSON.parse(found.out) as { findings: { type: string; trigger: string }[] }).findings;
    expect(findings.map((f) => [f.type, f.trigger])).toEqual([['unreachable_trigger', 'CloseOrder']]);
    const model = await run('model', 'specs/good.allium', '--json');
    expect(model.code).toBe(0);
    expect(JSON.parse(model.out)).toMatchObject({
      version: 3,
      entities: [{ name: 'Order', kind: 'internal' }],
    });
    await mkdir(join(dir, 'empty'));
    const none = await run('check', 'empty');
    expect(none.code).toBe(2);
    expect((await run('model', 'specs/good.allium', 'specs/good.allium')).code).toBe(2);
  });

  it('model and plan refuse a folder, as the reference does (exit 1), instead of picking one of its files', async () => {
    for (const action of ['model', 'plan']) {
      const folder = await run(action, 'specs', '--json');
      expect(folder.code).toBe(1);
      expect(folder.out).toBe('');
      expect(folder.err).toBe(
        `allium-loop spec ${action}: cannot read 'specs': it is a directory, not a file\n`,
      );
    }
  });

  it('plan --json prints the test obligations of one file; without --json one line each; exit 1 on a parse error', async () => {
    const json = await run('plan', 'specs/good.allium', '--json');
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.out) as {
      version: number;
      obligations: { id: string; category: string; source_span: { start: number; end: number } }[];
      diagnostics: unknown[];
    };
    expect(plan.version).toBe(3);
    expect(plan.diagnostics).toEqual([]);
    expect(plan.obligations.map((o) => o.id)).toEqual([
      'entity-fields.Order',
      'rule-success.Close',
      'rule-failure.Close.1',
      'surface-actor.Desk',
      'surface-provides.Desk',
    ]);
    const failure = plan.obligations[2];
    expect(GOOD.slice(failure?.source_span.start, failure?.source_span.end)).toBe(
      'requires: order.status = open',
    );
    const human = await run('plan', 'specs/good.allium');
    expect(human.out).toContain(
      'rule-failure.Close.1  Verify rule Close is rejected when requires clause fails\n',
    );
    expect(human.out.endsWith('5 obligation(s)\n')).toBe(true);
    await writeFile(join(dir, 'specs', 'bad.allium'), '-- allium: 3\nrule R {\n  when: X(\n}\n');
    expect((await run('plan', 'specs/bad.allium', '--json')).code).toBe(1);
    expect((await run('plan', 'specs/good.allium', 'specs/bad.allium')).code).toBe(2);
  });

  it('check exits 1 when a file has errors, and --json gives the diagnostics', async () => {
    await writeFile(join(dir, 'specs', 'broken.allium'), BROKEN);
    const human = await run('check', 'specs');
    expect(human.code).toBe(1);
    expect(human.out).toContain('specs/broken.allium:3:12 error allium.rule.undefinedTypeReference');
    const json = await run('check', '--json', 'specs/broken.allium');
    expect(json.code).toBe(1);
    const parsed = JSON.parse(json.out) as { spec_file: string; diagnostics: { code: string }[] };
    expect(parsed.spec_file).toBe('specs/broken.allium');
    expect(parsed.diagnostics.map((d) => d.code)).toContain('allium.rule.undefinedTypeReference');
  });

  it('graph prints edges, --json the graph, --mermaid a flowchart', async () => {
    expect((await run('graph')).out).toContain('surface:Desk -> rule:Close  trigger CloseOrder');
    const json = JSON.parse((await run('graph', '--json')).out) as { nodes: { id: string }[] };
    expect(json.nodes.map((n) => n.id)).toEqual(['entity:Order', 'rule:Close', 'surface:Desk']);
    const mermaid = (await run('graph', '--mermaid')).out;
    expect(mermaid.startsWith('flowchart LR\n')).toBe(true);
    expect(mermaid).toContain('surface_Desk ==>|"trigger CloseOrder"| rule_Close');
  });

  it('questions lists open questions', async () => {
    const { code, out } = await run('questions');
    expect(code).toBe(0);
    expect(out).toBe('specs/good.allium:14:1 Refunds?\n1 open question(s)\n');
    expect(JSON.parse((await run('questions', '--json')).out)).toEqual([
      { text: 'Refunds?', location: { file: 'specs/good.allium', line: 14, col: 1 } },
    ]);
  });

  it("reads a plain command line as Node's parseArgs does, and leaves every other to it", () => {
    const plain = [
      [],
      ['--json'],
      ['a.allium', '--json', 'b.allium', '--json'],
      ['--mermaid', 'specs'],
      ['-h'],
      ['--help', 'x'],
      ['-'],
      ['', 'a b', '$HOME', 'x-y', 'json'],
    ];
    for (const args of plain) {
      const ours = plainOptions(args);
      const node = parseArgs({ args, ...SPEC_ARGS });
      expect(ours, JSON.stringify(args)).toEqual({
        values: { ...node.values },
        positionals: node.positionals,
      });
    }
    // Anything else goes to parseArgs: its errors, `--` and `--json=…` are its own.
    const others = [['--bogus'], ['-x'], ['--', '--json'], ['--json=1'], ['-hj'], ['--JSON'], ['a', '---']];
    for (const args of others) expect(plainOptions(args), JSON.stringify(args)).toBeUndefined();
  });

  it('rejects unknown flags, unknown actions and missing paths with exit 2', async () => {
    const flag = await run('check', '--bogus');
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("Unknown option '--bogus'");
    expect((await run('frob')).code).toBe(2);
    expect((await run('check', 'nope')).err).toContain("cannot read 'nope'");
    expect((await run('questions', '--mermaid')).code).toBe(2);
  });

  it("searches directories with the project's one walker: specs in skipped directories (dependencies, build output, caches, the state directory) are not the project's", async () => {
    for (const skipped of ['node_modules/pkg', 'build', '.allium-loop/run', 'dist'])
      await mkdir(join(dir, skipped), { recursive: true }).then(() =>
        writeFile(join(dir, skipped, 'copy.allium'), BROKEN),
      );
    await mkdir(join(dir, 'specs', 'nested'));
    await writeFile(join(dir, 'specs', 'nested', 'more.allium'), GOOD);
    const { code, out } = await run('questions');
    expect(code).toBe(0);
    expect(out).toBe(
      'specs/good.allium:14:1 Refunds?\nspecs/nested/more.allium:14:1 Refunds?\n2 open question(s)\n',
    );
  });

  it('searches a folder the user names whole, as the reference does (specs under target/ or node_modules/ too), never round a loop', async () => {
    for (const folder of ['target/clojure', 'node_modules/pkg', 'build', '.legacy', '.allium-loop'])
      await mkdir(join(dir, 'specs', folder), { recursive: true }).then(() =>
        writeFile(join(dir, 'specs', folder, 'x.allium'), GOOD),
      );
    // A link back up the tree: followed, it would never end (the reference goes round until the system refuses).
    await symlink('..', join(dir, 'specs', 'target', 'loop'));
    const { code, out } = await run('questions', 'specs');
    expect(code).toBe(0);
    expect(out.split('\n').filter((line) => line.includes('Refunds?'))).toEqual([
      'specs/.allium-loop/x.allium:14:1 Refunds?',
      'specs/.legacy/x.allium:14:1 Refunds?',
      'specs/build/x.allium:14:1 Refunds?',
      'specs/good.allium:14:1 Refunds?',
      'specs/node_modules/pkg/x.allium:14:1 Refunds?',
      'specs/target/clojure/x.allium:14:1 Refunds?',
    ]);
    // With no path, the project: the walker's skipped directories stay skipped.
    const project = await run('questions');
    expect(project.out).toBe(
      'specs/.legacy/x.allium:14:1 Refunds?\nspecs/good.allium:14:1 Refunds?\n2 open question(s)\n',
    );
  });

  it('reads an empty path given as naming no file (exit 1, the others still checked), not as the project', async () => {
    const alone = await run('check', '--json', '');
    expect(alone).toMatchObject({ code: 1, out: '' });
    expect(alone.err).toBe("allium-loop spec check: cannot read '': no such file or directory\n");
    const withOther = await run('analyse', '--json', '', 'specs/good.allium');
    expect(withOther.code).toBe(1);
    expect(withOther.err).toBe("allium-loop spec analyse: cannot read '': no such file or directory\n");
    expect(withOther.out).toContain('"spec_file": "specs/good.allium"');
    expect(withOther.out.match(/"spec_file"/g)).toHaveLength(1);
    // No path at all is still the project.
    expect((await run('check', '--json')).out).toContain('"spec_file": "specs/good.allium"');
  });

  it('reads a path as the system does: `..` after a link from where the link leads, a final slash after a file refused', async () => {
    // specs/elsewhere -> ../far/deep: `specs/elsewhere/../x.allium` is far/x.allium to the system (and the reference),
    // specs/x.allium by name (Node's resolve); only the first exists.
    await mkdir(join(dir, 'far', 'deep'), { recursive: true });
    await writeFile(join(dir, 'far', 'x.allium'), BROKEN);
    await symlink('../far/deep', join(dir, 'specs', 'elsewhere'));
    const through = await run('check', '--json', 'specs/elsewhere/../x.allium');
    expect(through.err).toBe('');
    expect(through.out).toContain('"file": "specs/elsewhere/../x.allium"');
    expect(through.out).toContain('Ghost');
    // A folder named that way is searched where the system finds it too.
    const folder = await run('check', '--json', 'specs/elsewhere/..');
    expect(folder.out).toContain('"spec_file": "specs/elsewhere/../x.allium"');
    expect(folder.out).not.toContain('good.allium');
    const slash = await run('check', '--json', 'specs/good.allium/');
    expect(slash).toMatchObject({ code: 1, out: '' });
    expect(slash.err).toBe("allium-loop spec check: cannot read 'specs/good.allium/': not a directory\n");
  });

  it('resolves a use path as the reference does: from the folder of the importer’s name, by the system', async () => {
    // common/shared.allium, linked into specs/, imports "./other.allium": the one beside the link (specs/), as the
    // reference finds it, not the one beside the real file (common/).
    await mkdir(join(dir, 'common'));
    const importer = '-- allium: 3\nuse "./other.allium" as o\nentity A {\n  x: o/T\n}\n';
    await writeFile(join(dir, 'common', 'shared.allium'), importer);
    await writeFile(join(dir, 'common', 'other.allium'), '-- allium: 3\nentity T {\n  z: Integer\n}\n');
    await writeFile(join(dir, 'specs', 'other.allium'), '-- allium: 3\nentity T {\n  y: String\n}\n');
    await symlink('../common/shared.allium', join(dir, 'specs', 'linked.allium'));
    const unusedT = (out: string): string[] =>
      out
        .split(/(?<=^\})\n/m)
        .filter((d) => d.trim() !== '')
        .map((d) => JSON.parse(d) as { spec_file: string; diagnostics: { message: string }[] })
        .filter((r) => r.diagnostics.some((d) => d.message.startsWith("Entity 'T'")))
        .map((r) => r.spec_file);
    const named = await run(
      'check',
      '--json',
      'specs/linked.allium',
      'specs/other.allium',
      'common/other.allium',
    );
    expect(named.out).not.toContain('allium.use.unresolvedPath');
    expect(unusedT(named.out)).toEqual(['common/other.allium']);
    // The file named from both folders: its own imports are worked out from its last name (each name overwrites the
    // last in the reference), while what every name imports counts for the file imported (T is used).
    const unresolved = (out: string): number => out.split('allium.use.unresolvedPath').length - 1;
    const lastInCommon = await run(
      'check',
      '--json',
      'specs/linked.allium',
      'common/shared.allium',
      'specs/other.allium',
    );
    expect(unresolved(lastInCommon.out)).toBe(2); // common/other.allium is not in the check set: both reports say so
    expect(unusedT(lastInCommon.out)).toEqual([]);
    const lastInSpecs = await run(
      'check',
      '--json',
      'common/shared.allium',
      'specs/linked.allium',
      'specs/other.allium',
    );
    expect(unresolved(lastInSpecs.out)).toBe(0);
    expect(unusedT(lastInSpecs.out)).toEqual([]);
    // `..` after a link inside the use path itself: from where the link leads (far/deep/.. is far/).
    await mkdir(join(dir, 'far', 'deep'), { recursive: true });
    await writeFile(join(dir, 'far', 't.allium'), '-- allium: 3\nentity T {\n  q: String\n}\n');
    await symlink('../far/deep', join(dir, 'specs', 'deep-link'));
    await writeFile(
      join(dir, 'specs', 'imp.allium'),
      importer.replace('./other.allium', './deep-link/../t.allium'),
    );
    const through = await run('check', '--json', 'specs/imp.allium', 'far/t.allium');
    expect(through.out).not.toContain('allium.use.unresolvedPath');
    expect(unusedT(through.out)).toEqual([]);
  });

  it('stops following symbolic links that fan out past 10,000 folders, says where, and exits 1', async () => {
    // 101 links to a folder holding 100 links to another: 10,201 folders reached through links in all.
    for (const folder of ['fan/l0', 'fan/l1', 'fan/l2']) await mkdir(join(dir, folder), { recursive: true });
    await writeFile(join(dir, 'fan', 'l0', 'a.allium'), GOOD);
    for (let i = 0; i <= 100; i += 1) await symlink('../l1', join(dir, 'fan', 'l0', `x${i}`));
    for (let i = 0; i < 100; i += 1) await symlink('../l2', join(dir, 'fan', 'l1', `y${i}`));
    const { code, out, err } = await run('check', '--json', 'fan/l0');
    expect(code).toBe(1);
    expect(err).toMatch(
      /^allium-loop spec check: not searched past 'fan\/l0\/x\d+\/y\d+': 10000 folders reached through symbolic links already\n$/,
    );
    expect(out).toContain('"spec_file": "fan/l0/a.allium"');
  });

  it('takes a named folder’s links as the reference does: a folder searched, a file listed, a broken one unreadable (exit 1)', async () => {
    await mkdir(join(dir, 'common'));
    await writeFile(join(dir, 'common', 'shared.allium'), GOOD);
    await symlink('../common/shared.allium', join(dir, 'specs', 'linked.allium'));
    await symlink('../common', join(dir, 'specs', 'folder-link'));
    const files = (out: string): unknown[] =>
      out
        .split(/(?<=^\})\n/m)
        .filter((d) => d.trim() !== '')
        .map((d) => (JSON.parse(d) as Record<string, unknown>)['spec_file'])
        .sort();
    const linked = await run('check', '--json', 'specs');
    // The same file by three names: one file of the check set, reported under each (as the reference reports it).
    expect(files(linked.out)).toEqual([
      'specs/folder-link/shared.allium',
      'specs/good.allium',
      'specs/linked.allium',
    ]);
    expect(linked.err).toBe('');
    await symlink('../common/gone.allium', join(dir, 'specs', 'broken.allium'));
    const broken = await run('check', '--json', 'specs');
    expect(broken.code).toBe(1);
    expect(broken.err).toBe("allium-loop spec check: cannot read 'specs/broken.allium'\n");
    expect(files(broken.out)).toEqual([
      'specs/folder-link/shared.allium',
      'specs/good.allium',
      'specs/linked.allium',
    ]);
    // The project (no path) lists no link at all, as everywhere else in the engine.
    expect((await run('questions')).out).toBe(
      'common/shared.allium:14:1 Refunds?\nspecs/good.allium:14:1 Refunds?\n2 open question(s)\n',
    );
  });
});
