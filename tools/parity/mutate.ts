/**
 * Writes mutated copies of Allium specs into a folder, for the parity tool to compare ours and the reference on broken
 * input (error recovery is where two checkers part ways):
 *
 *   node --conditions=development --import tsx tools/parity/mutate.ts <out-dir> <copies-per-file> <seed> <file.allium>…
 *   ALLIUM_REF=… node --conditions=development --import tsx tools/parity/parity.ts <out-dir>
 *
 * Each copy gets one to three mutations, each at a random line: delete, duplicate, swap with the next, join with the
 * next, cut the file there, delete a token or a bracket, insert punctuation, indent or dedent, rename a word (a
 * suffix or one letter less), flip a word's first letter's case, swap `:` and `=`, replace a keyword with another,
 * insert a line from another input file, or copy a whole top-level block there; `MUTATE_OPS` picks others (see OPS).
 * The same seed gives the same copies.
 * Nothing is written inside the repository unless asked to.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { seeded } from './random.js';

const [out, perFile, seedText, ...files] = process.argv.slice(2);
if (out === undefined || perFile === undefined || seedText === undefined || files.length === 0) {
  process.stderr.write('usage: mutate.ts <out-dir> <copies-per-file> <seed> <file.allium>…\n');
  process.exit(2);
}

const { random, below, pick } = seeded(Number(seedText));

const KEYWORDS = [
  'when:',
  'requires:',
  'ensures:',
  'let',
  'for',
  'if',
  'else',
  'entity',
  'value',
  'enum',
  'rule',
  'surface',
  'becomes',
  'transitions_to',
  'exists',
  'not',
  'with',
  'where',
  'in',
  'and',
  'or',
  'implies',
  'created',
  'config',
  'given',
  'variant',
  'default',
  'deferred',
  'use',
  'as',
  'facing',
  'context',
  'exposes',
  'provides',
  'contracts:',
  'demands',
  'fulfils',
  '@guidance',
  '@guarantee',
  '@invariant',
  'invariant',
  'open question',
  '->',
  '=>',
  '|',
  '??',
  '?.',
];
const KEYWORD_AT = new RegExp(
  `(?<![\\w.])(${KEYWORDS.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?!\\w)`,
  'g',
);
const PUNCTUATION = [
  '(',
  ')',
  '{',
  '}',
  ':',
  '"',
  ',',
  '.',
  '=',
  '->',
  'when:',
  '?',
  '|',
  '`',
  '@',
  '[',
  ']',
  '<',
  '>',
];
/**
 * The mutations drawn from: by default the sixteen the earlier passes used (so a seed gives the same copies as it did
 * then); `MUTATE_OPS=qualify,negate` (any list of names) draws from those instead. `qualify` turns a name into
 * `alias/name` (an alias the file declares, or `core`), `negate` puts a `-` before a name or number, `declname`
 * replaces a name with one the file declares (an entity, value, enum, variant, actor, surface, rule or contract), so
 * a declaration's name turns up where its uses are counted, or where they are not, `foreignname` with one any
 * input file declares (given a folder's files, names from the files it imports), and `reuse` with any other word of
 * the file (a field, a status value, a trigger, a binding).
 */
const DEFAULT_OPS = [
  'del',
  'dup',
  'swap',
  'deltok',
  'ins',
  'indent',
  'dedent',
  'rename',
  'joinline',
  'trunc',
  'kw',
  'brace',
  'case',
  'foreign',
  'colon',
  'dupblock',
];
/** What `operator` and `literal` put in place of an operator or a literal. */
const OPERATORS = [
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '+',
  '-',
  '*',
  '/',
  'and',
  'or',
  'in',
  'not in',
  'implies',
  '?.',
  '??',
  '=>',
  '->',
  '.',
];
const LITERALS = [
  '"x"',
  '""',
  '0',
  '-1',
  '3.5',
  '24.hours',
  '7.days',
  'true',
  'false',
  'null',
  'now',
  '{}',
  '[]',
  '{ 1, 2 }',
  '"--"',
];
const OPS = process.env['MUTATE_OPS']?.split(',') ?? DEFAULT_OPS;
const KEYWORD_WORDS = new Set(
  'entity external value enum rule surface actor contract given config invariant variant default deferred open question use as when requires ensures let for in if else where with not and or implies exists transitions_to becomes transitions terminal true false null this now'.split(
    ' ',
  ),
);
const BLOCK_START = /^(entity|rule|value|enum|surface|actor|contract|config|given|variant|invariant)\b/;

const inputs = files.map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n') }));
const pool = inputs.flatMap((input) => input.lines);
const DECLARED =
  /^(?:external\s+)?(?:entity|value|enum|variant|actor|surface|rule|contract)\s+([A-Za-z_]\w*)/gm;
/** The names every input file declares (for `foreignname`). */
const declaredAnywhere = [...new Set([...pool.join('\n').matchAll(DECLARED)].map((m) => m[1] ?? 'X'))];

/** `text` with the match `m` replaced by `by`. */
const replaced = (text: string, m: RegExpMatchArray, by: string): string =>
  text.slice(0, m.index) + by + text.slice((m.index ?? 0) + m[0].length);

function mutate(lines: readonly string[]): { op: string; lines: string[] } {
  const k = below(lines.length);
  const l = [...lines];
  const line = l[k] ?? '';
  const matches = (re: RegExp): RegExpMatchArray[] => [...line.matchAll(re)];
  // Words outside the line's comment, for the mutations that mean to change what the spec says.
  const comment = line.indexOf('--');
  const code = (found: RegExpMatchArray[]): RegExpMatchArray[] =>
    comment === -1 ? found : found.filter((m) => (m.index ?? 0) < comment);
  const op = pick(OPS);
  switch (op) {
    case 'del':
      l.splice(k, 1);
      break;
    case 'dup':
      l.splice(k, 0, line);
      break;
    case 'swap':
      if (k + 1 < l.length) [l[k], l[k + 1]] = [l[k + 1] ?? '', line];
      break;
    case 'deltok': {
      const tokens = matches(/\w+|[^\w\s]/g);
      if (tokens.length > 0) l[k] = replaced(line, pick(tokens), '');
      break;
    }
    case 'ins': {
      const at = below(line.length + 1);
      l[k] = line.slice(0, at) + pick(PUNCTUATION) + line.slice(at);
      break;
    }
    case 'indent':
      l[k] = pick(['    ', '  ', '\t', ' ']) + line;
      break;
    case 'dedent':
      l[k] = line.trimStart();
      break;
    case 'rename': {
      const words = matches(/\b[A-Za-z_]\w*\b/g);
      if (words.length === 0) break;
      const word = pick(words);
      const renamed = random() < 0.5 ? word[0] + pick(['s', 'X', '_2']) : word[0].slice(0, -1) || 'x';
      l[k] = replaced(line, word, renamed);
      break;
    }
    case 'joinline':
      if (k + 1 < l.length) l.splice(k, 2, `${line} ${(l[k + 1] ?? '').trim()}`);
      break;
    case 'trunc':
      l.length = k;
      break;
    case 'kw': {
      const found = matches(KEYWORD_AT);
      if (found.length > 0) l[k] = replaced(line, pick(found), pick(KEYWORDS));
      break;
    }
    case 'brace': {
      const found = matches(/[{}()[\]]/g);
      if (found.length > 0) l[k] = replaced(line, pick(found), '');
      break;
    }
    case 'case': {
      const words = matches(/\b[A-Za-z]\w*\b/g);
      if (words.length === 0) break;
      const m = pick(words);
      const first = m[0][0] ?? '';
      const flipped =
        (first === first.toUpperCase() ? first.toLowerCase() : first.toUpperCase()) + m[0].slice(1);
      l[k] = replaced(line, m, flipped);
      break;
    }
    case 'foreign':
      l.splice(k, 0, pick(pool));
      break;
    case 'colon': {
      const found = matches(/[:=]/g);
      if (found.length > 0) {
        const m = pick(found);
        l[k] = replaced(line, m, m[0] === '=' ? ':' : '=');
      }
      break;
    }
    case 'qualify': {
      // A name made qualified, by an alias the file declares or by one it does not.
      const words = matches(/(?<![\w/.])[A-Za-z_]\w*\b(?!\s*\/)/g).filter((w) => !KEYWORD_WORDS.has(w[0]));
      if (words.length === 0) break;
      const aliases = [...lines.join('\n').matchAll(/^use\s+"[^"]*"\s+as\s+(\w+)/gm)].map(
        (m) => m[1] ?? 'core',
      );
      const word = pick(words);
      l[k] = replaced(line, word, `${pick([...aliases, 'core'])}/${word[0]}`);
      break;
    }
    case 'negate': {
      const found = matches(/(?<![\w.])(?:[A-Za-z_]\w*|\d+)\b/g).filter((w) => !KEYWORD_WORDS.has(w[0]));
      if (found.length === 0) break;
      const m = pick(found);
      l[k] = replaced(line, m, `-${m[0]}`);
      break;
    }
    case 'declname':
    case 'foreignname':
    case 'reuse': {
      const words = code(matches(/(?<![\w/.])[A-Za-z_]\w*\b/g)).filter((w) => !KEYWORD_WORDS.has(w[0]));
      const text = lines.join('\n');
      const by =
        op === 'foreignname'
          ? declaredAnywhere
          : op === 'declname'
            ? [...text.matchAll(DECLARED)].map((m) => m[1] ?? 'X')
            : [...new Set(text.match(/\b[A-Za-z_]\w*\b/g) ?? [])].filter((w) => !KEYWORD_WORDS.has(w));
      if (words.length === 0 || by.length === 0) break;
      l[k] = replaced(line, pick(words), pick(by));
      break;
    }
    case 'operator': {
      const found = code(matches(/!=|<=|>=|=>|->|\?\.|\?\?|[=<>+*/-]|\b(?:and|or|in|not|implies)\b/g));
      if (found.length > 0) l[k] = replaced(line, pick(found), pick(OPERATORS));
      break;
    }
    case 'literal': {
      const found = code(matches(/"[^"]*"|\b\d+(?:\.\d+)?(?:\.\w+)?\b|\b(?:true|false|null|now)\b/g));
      if (found.length > 0) l[k] = replaced(line, pick(found), pick(LITERALS));
      break;
    }
    case 'dupblock': {
      const starts = l.flatMap((text, i) => (BLOCK_START.test(text) ? [i] : []));
      if (starts.length === 0) break;
      const start = pick(starts);
      let end = start;
      while (end < l.length && !(l[end] ?? '').startsWith('}')) end += 1;
      l.splice(k, 0, ...l.slice(start, end + 1));
      break;
    }
  }
  return { op, lines: l };
}

mkdirSync(out, { recursive: true });
let written = 0;
for (const [index, { file, lines }] of inputs.entries()) {
  // The input's number keeps copies of two files with one name (from two repositories) apart.
  const base = `${basename(file, '.allium').slice(0, 40)}-${index}`;
  for (let copy = 0; copy < Number(perFile); copy += 1) {
    const ops: string[] = [];
    let current = lines;
    for (let n = pick([1, 1, 1, 2, 3]); n > 0 && current.length > 0; n -= 1) {
      const mutated = mutate(current);
      ops.push(mutated.op);
      current = mutated.lines;
    }
    writeFileSync(
      join(out, `${base}-m${String(copy).padStart(3, '0')}-${ops.join('+')}.allium`),
      current.join('\n'),
    );
    written += 1;
  }
}
console.log(`${written} mutated specs in ${out}`);
