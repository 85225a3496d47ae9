/**
 * Writes the Allium snippets of Markdown documents (the language reference, the skills' references) as one
 * `.allium` file each into a folder, for the parity tool:
 *
 *   node --conditions=development --import tsx tools/parity/snippets.ts <out-dir> <file.md>…
 *   ALLIUM_REF=… node --conditions=development --import tsx tools/parity/parity.ts <out-dir>
 *
 * A snippet is a fenced code block (any or no language tag) with a line that starts a declaration; one without a
 * version marker gets `-- allium: 3` in front. Identical snippets are written once. Most snippets are fragments
 * (`...` bodies, `[optional]` parts), which is the point: they test what both checkers make of imperfect input.
 * Nothing is written inside the repository unless asked to: the documents are other people's text.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DECLARATION =
  /^\s*(entity|external entity|rule|value|enum|surface|actor|contract|config|given|invariant|variant|default|deferred|open question|use)\b/m;
const FENCE = /```[A-Za-z]*\n([\s\S]*?)```/g;

const [out, ...documents] = process.argv.slice(2);
if (out === undefined || documents.length === 0) {
  process.stderr.write('usage: snippets.ts <out-dir> <file.md>…\n');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const seen = new Set<string>();
for (const document of documents) {
  for (const [, body = ''] of readFileSync(document, 'utf8').matchAll(FENCE)) {
    if (!DECLARATION.test(body) || seen.has(body)) continue;
    seen.add(body);
    const text = /^-- allium: \d/m.test(body) ? body : `-- allium: 3\n${body}`;
    writeFileSync(join(out, `${String(seen.size).padStart(3, '0')}.allium`), text);
  }
}
process.stdout.write(`${seen.size} snippets in ${out}\n`);
