/**
 * Transpiles the ledger and errors sources (types stripped, nothing else changed) so child processes start as
 * plain `node` in ~0.1 s instead of the ~0.5 s tsx needs: the crash test spawns hundreds of them.
 * `@allium-loop/errors` is pointed at its transpiled source. The output goes to
 * `packages/ledger/out-tsc/children-<hash of the sources>/`, built once and renamed into place, so parallel
 * test files share it and never see a half-written tree.
 */
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('../../', import.meta.url));
const trees = [
  { name: 'errors', src: join(packageRoot, '../errors/src') },
  { name: 'ledger', src: join(packageRoot, 'src') },
] as const;

async function listSources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function readSources(): Promise<{ tree: string; src: string; file: string; text: string }[]> {
  const all = [];
  for (const { name, src } of trees) {
    for (const file of await listSources(src))
      all.push({ tree: name, src, file, text: await readFile(file, 'utf8') });
  }
  return all;
}

async function transpileInto(
  outRoot: string,
  sources: Awaited<ReturnType<typeof readSources>>,
): Promise<void> {
  const ts = (await import('typescript')).default;
  const errorsIndex = join(outRoot, 'errors/index.js');
  for (const { tree, src, file, text } of sources) {
    const target = join(outRoot, tree, relative(src, file)).replace(/\.ts$/, '.js');
    const { outputText } = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: file,
    });
    let fromHere = relative(dirname(target), errorsIndex).replaceAll('\\', '/');
    if (!fromHere.startsWith('.')) fromHere = `./${fromHere}`;
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, outputText.replaceAll(`'@allium-loop/errors'`, `'${fromHere}'`));
  }
}

/** Transpiles (unless an up-to-date copy exists) and returns the directory of the transpiled ledger sources. */
export async function compileChildren(): Promise<string> {
  const sources = await readSources();
  const hash = createHash('sha256');
  for (const { file, text } of sources) hash.update(file).update('\0').update(text).update('\0');
  const outRoot = join(packageRoot, `out-tsc/children-${hash.digest('hex').slice(0, 16)}`);
  const ready = await access(join(outRoot, 'ledger')).then(
    () => true,
    () => false,
  );
  if (!ready) {
    const temp = `${outRoot}.${randomBytes(4).toString('hex')}.partial`;
    await transpileInto(temp, sources);
    await rename(temp, outRoot).catch(() => rm(temp, { recursive: true, force: true }));
  }
  return join(outRoot, 'ledger');
}
