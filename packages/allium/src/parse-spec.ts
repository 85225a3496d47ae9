import {
  kidAt,
  kidCount,
  type BlockItem,
  type BlockKind,
  type Declaration,
  type Expr,
  type Ident,
  type ParsedSpec,
  type Suppression,
} from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import { Lexer, type Comment, type Token } from './lexer.js';
import { parseBlockItems, parseBracedBody, unquote } from './parse-block-items.js';
import { plainText } from './string-literal.js';
import { parseExpr } from './parse-expression.js';
import { describeToken, ParserState } from './parser-state.js';
import { startsLower, startsUpper } from './walk.js';

const SIMPLE_BLOCKS = new Set<string>(['entity', 'value', 'enum', 'rule', 'surface', 'actor', 'contract']);

const EXPECTED_DECLARATION =
  'expected declaration (entity, rule, enum, value, config, surface, actor, given, default, variant, deferred, use, open question, contract, invariant)';

/** The language versions this parser reads (3 is current; 1 and 2 are read tolerantly). */
export const SUPPORTED_VERSIONS: readonly number[] = [1, 2, 3];

/**
 * Parses one `.allium` file. Never throws: syntax problems become diagnostics and parsing resumes at the next
 * item or declaration, so one broken declaration does not hide the rest. Linear in the size of the input.
 */
export function parseSpec(text: string, file: string): ParsedSpec {
  const lexer = new Lexer(text);
  const p = new ParserState(lexer, text, file);
  const header = readVersion(text, p.current, file);
  p.afterHeader(header.diagnostics);
  const declarations: Declaration[] = [];
  while (!p.atEof()) {
    const before = p.pos;
    const declaration = parseDeclaration(p);
    if (declaration !== undefined) declarations.push(declaration);
    else {
      // As the reference: a failed declaration always skips one more token (often the keyword of the next).
      p.advance();
      p.drop(before);
    }
    p.settle();
  }
  p.settle(true);
  return {
    file,
    source: text,
    version: header.version,
    declarations,
    suppressions: readSuppressions(lexer.directives, file),
    nameCounts: p.nameCounts(),
    diagnostics: [...header.diagnostics, ...p.diagnostics],
    lines: p.lines,
  };
}

function parseDeclaration(p: ParserState): Declaration | undefined {
  const token = p.current;
  if (token.kind === 'keyword' && SIMPLE_BLOCKS.has(token.text))
    return parseNamedBlock(p, token.text as BlockKind, token);
  if (p.at('external')) {
    p.advance();
    if (p.at('entity')) return parseNamedBlock(p, 'external entity', token);
    p.errorHere("expected 'entity' after 'external'");
    return undefined;
  }
  if (p.at('given') || p.at('config')) return parseAnonymousBlock(p, token.text as BlockKind, token);
  if (p.atWord() && p.at('/', 1) && p.at('config', 2)) {
    p.advance();
    p.advance();
    return parseAnonymousBlock(p, 'config', token, token.text);
  }
  if (p.at('invariant')) return parseInvariant(p);
  if (p.at('variant')) return parseVariant(p);
  if (p.at('default')) return parseDefault(p);
  if (p.at('deferred')) return parseDeferred(p);
  if (p.at('open')) return parseOpenQuestion(p);
  if (p.at('use')) return parseUse(p);
  p.errorHere(`${EXPECTED_DECLARATION}, found ${describeToken(token)}`);
  return undefined;
}

/** What a missing declaration name is called in the error, where the reference does not say `<keyword> name`. */
const NAME_EXPECTED: Partial<Record<BlockKind, string>> = {
  value: 'value type name',
  'external entity': 'entity name',
};

/** `first` is the declaration's first token (`external` for an external entity), where its span starts. */
function parseNamedBlock(p: ParserState, block: BlockKind, first: Token): Declaration | undefined {
  p.advance();
  const nameToken = p.current;
  const name = p.expectIdent(NAME_EXPECTED[block] ?? `${block} name`);
  if (name === undefined) return undefined;
  if (block === 'contract') {
    if (startsLower(name.name)) p.errorAlways(nameToken, 'contract name must start with an uppercase letter');
    if (p.at(':')) {
      p.errorHere('contract body must use braces { }, not a colon');
      return undefined;
    }
  }
  return parseBraces(p, block, first, name);
}

function parseAnonymousBlock(
  p: ParserState,
  block: BlockKind,
  first: Token,
  qualifier?: string,
): Declaration | undefined {
  p.advance();
  return parseBraces(p, block, first, undefined, qualifier);
}

function parseBraces(
  p: ParserState,
  block: BlockKind,
  first: Token,
  name?: Ident,
  qualifier?: string,
): Declaration | undefined {
  if (p.expect('{') === undefined) return undefined;
  const items = parseBlockItems(p, block);
  const endLine = p.current.line;
  // A block the end of the file leaves open is dropped whole, as the reference does: its names are no uses.
  if (p.expect('}') === undefined) return undefined;
  return {
    kind: 'block',
    block,
    ...(name === undefined ? {} : { name }),
    ...(qualifier === undefined ? {} : { qualifier }),
    items,
    location: p.location(first),
    endLine,
    span: { start: first.start, end: p.previous().end },
  };
}

function parseInvariant(p: ParserState): Declaration | undefined {
  const first = p.advance();
  const location = p.location(first);
  const nameToken = p.current;
  const name = p.expectLabel('invariant name');
  if (name !== undefined && startsLower(name.name))
    p.errorAlways(nameToken, 'invariant name must start with an uppercase letter');
  const body = name === undefined ? undefined : parseBracedBody(p);
  if (name === undefined || body === undefined) return undefined;
  return { kind: 'invariant', name, body, location, span: { start: first.start, end: p.previous().end } };
}

/**
 * `variant Name : Base [{ items }]`, read as the reference reads it: the base is an expression. `Base { … }` with the
 * `{` on the base's line is a join (its entries `field` or `field: value`, with a join's errors), whose names, the
 * base's own included (an entity named there is still used: `checkUnused`), are no uses and whose fields no check
 * judges; its `field: value` entries stay the variant's fields for the inventory. Any
 * other expression than a name or such a join (`Finding.created(…)` after a stray `variant`) names no base, and its
 * names are no uses either. A `{` on a later line opens the variant's items.
 */
function parseVariant(p: ParserState): Declaration | undefined {
  const first = p.advance();
  const location = p.location(first);
  const name = p.expectIdent('variant name');
  if (name === undefined || p.expect(':') === undefined) return undefined;
  const from = p.pos;
  const baseExpr = parseExpr(p);
  if (baseExpr === undefined) return undefined;
  const joined = baseExpr.kind === 'join';
  const entity = joined ? baseExpr.a : baseExpr;
  const base =
    entity?.kind === 'ident' && entity.name !== undefined
      ? { name: entity.name, location: p.locationAt(entity.start) }
      : undefined;
  if (joined || base === undefined) p.drop(from);
  let items = joined ? joinFields(p, baseExpr) : [];
  let end = baseExpr.end;
  const braced = p.at('{');
  if (braced) {
    p.advance();
    items = parseBlockItems(p, 'variant');
    if (p.expect('}') === undefined) return undefined;
    // The reference's span ends with the last item (or the base, without any).
    end = items.length === 0 ? baseExpr.end : (items[items.length - 1] as BlockItem).end;
  }
  const endLine = p.previous().line;
  const span = { start: first.start, end };
  const variant = {
    kind: 'variant',
    name,
    items,
    joined: joined && !braced,
    baseIsJoin: joined,
    location,
    endLine,
    span,
  } as const;
  return base === undefined ? variant : { ...variant, base };
}

/** A join's `field: value` entries as field items. */
function joinFields(p: ParserState, join: Expr): BlockItem[] {
  const fields: BlockItem[] = [];
  for (let k = 1; k < kidCount(join); k += 1) {
    const entry = kidAt(join, k)!;
    if (entry.kind !== 'arg' || entry.name === undefined || entry.a === undefined) continue;
    fields.push({
      kind: 'field',
      name: { name: entry.name, location: p.locationAt(entry.start) },
      value: entry.a,
      start: entry.start,
      end: entry.end,
    });
  }
  return fields;
}

/**
 * `default [alias/][Type] name = value`, the type told apart by looking ahead to the `=`, as the reference does:
 * `a / T n =` is a qualified type, `T n =` a type, anything else a name alone.
 */
function parseDefault(p: ParserState): Declaration | undefined {
  const location = p.location(p.advance());
  let type: Ident | undefined;
  if (p.atWord() && p.at('/', 1) && p.atWord(2) && p.atWord(3) && p.at('=', 4)) {
    const alias = p.expectIdent('module alias');
    p.advance();
    const name = p.expectIdent('type name');
    if (alias === undefined || name === undefined) return undefined;
    type = { name: `${alias.name}/${name.name}`, location: alias.location };
  } else if (p.atWord() && p.atWord(1) && p.at('=', 2)) type = p.expectIdent('type name');
  // The instance name is a label: the reference reads only the type as a use.
  const name = p.expectLabel('default name');
  if (name === undefined || p.expect('=') === undefined) return undefined;
  const value = parseExpr(p);
  if (value === undefined) return undefined;
  return type === undefined
    ? { kind: 'default', name, value, location }
    : { kind: 'default', type, name, value, location };
}

/**
 * `deferred Name.path "hint"`, as the reference reads it: the path (`Name`, `alias/Name`, `.field` segments) stays
 * on its line and stops before a `.` that no word follows (`deferred Foo.` forms, the `.` is then stray input); the
 * hint is a string on the same line.
 */
function parseDeferred(p: ParserState): Declaration | undefined {
  const keyword = p.advance();
  const location = p.location(keyword);
  const first = p.expectLabel('deferred name');
  if (first === undefined) return undefined;
  let path = first.name;
  let qualified: (Ident & { member: boolean }) | undefined;
  if (p.at('/') && sameLine(p, p.previous().end, p.current.start)) {
    const end = p.previous().end;
    p.advance();
    if (!p.atWord() || !sameLine(p, end, p.current.start)) {
      p.errorHere(`expected deferred name after '/', found ${describeToken(p.current)}`);
      return undefined;
    }
    path += `/${p.expectLabel("deferred name after '/'")?.name ?? ''}`;
    qualified = { name: path, location: first.location, member: false };
  }
  for (
    let segment = 1;
    p.at('.') && p.atWord(1) && sameLine(p, p.previous().end, p.peek(1).start);
    segment += 1
  ) {
    p.advance();
    const field = p.expectLabel('field name')?.name ?? '';
    path += `.${field}`;
    // `X.Name` right after a plain first word: an import alias's `X/Name` to the reference (`X.a.Name` is not).
    if (segment === 1 && qualified === undefined && startsUpper(field))
      qualified = { name: `${first.name}/${field}`, location: first.location, member: true };
  }
  const hint =
    p.current.kind === 'string' && sameLine(p, p.previous().end, p.current.start)
      ? unquote(p.advance().text)
      : undefined;
  return {
    kind: 'deferred',
    path,
    ...(qualified === undefined ? {} : { qualified }),
    ...(hint === undefined ? {} : { hint }),
    location,
    start: keyword.start,
  };
}

/** True when no line break lies between two source offsets. */
function sameLine(p: ParserState, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) {
    const c = p.source.charCodeAt(i);
    if (c === 10 || c === 13) return false;
  }
  return true;
}

/** `open question "…"`; at the top level `open` alone already commits to it, as in the reference. */
function parseOpenQuestion(p: ParserState): Declaration | undefined {
  const location = p.location(p.advance());
  if (p.expect('question') === undefined) return undefined;
  if (p.current.kind !== 'string') {
    p.errorHere(`expected string, found ${describeToken(p.current)}`);
    return undefined;
  }
  return { kind: 'open-question', text: unquote(p.advance().text), location };
}

function parseUse(p: ParserState): Declaration | undefined {
  const location = p.location(p.advance());
  if (p.current.kind !== 'string') {
    p.errorHere(`expected string, found ${describeToken(p.current)}`);
    return undefined;
  }
  const pathToken = p.advance();
  // The reference's text of the string: interpolations dropped, escapes resolved (see string-literal.ts).
  const path = plainText(pathToken.text);
  const pathLocation = p.location(pathToken);
  if (p.eat('as') === undefined) return { kind: 'use', path, location, pathLocation };
  const alias = p.expectLabel('import alias');
  return alias === undefined ? undefined : { kind: 'use', path, alias, location, pathLocation };
}

/**
 * Unicode white space trimmed from both ends, as the reference trims a line: unlike `String.prototype.trim`, a byte
 * order mark (U+FEFF) stays (a file starting with one has no readable version marker there) and U+0085 goes.
 */
function trimWhiteSpace(text: string): string {
  return text.replace(
    /^[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g,
    '',
  );
}

/**
 * Reads the `-- allium: N` header as the reference does: the first non-blank line, if it is a `--` comment whose
 * text starts with `allium:` followed by a whole number. Problems are reported at the first token (the first
 * declaration), with no code: a missing or unreadable marker is a warning, a version other than 1-3 an error.
 */
function readVersion(
  text: string,
  first: Token,
  file: string,
): { version: number | undefined; diagnostics: Diagnostic[] } {
  let version: number | undefined;
  // Line by line up to the first non-blank one (not `split`: that would copy every line of a big spec).
  for (let from = 0; from <= text.length;) {
    const end = text.indexOf('\n', from);
    const line = trimWhiteSpace(text.slice(from, end === -1 ? text.length : end));
    from = end === -1 ? text.length + 1 : end + 1;
    if (line === '') continue;
    if (line.startsWith('--')) {
      const rest = trimWhiteSpace(line.slice(2));
      if (rest.startsWith('allium:')) {
        const number = trimWhiteSpace(rest.slice('allium:'.length));
        if (/^\+?[0-9]+$/.test(number) && Number(number) <= 0xffffffff) version = Number(number);
      }
    }
    break;
  }
  const location = { file, line: first.line, col: first.col };
  if (version === undefined) {
    const message = "missing version marker; expected '-- allium: 1' as the first line";
    return { version, diagnostics: [{ code: null, severity: 'warning', message, location }] };
  }
  if (!SUPPORTED_VERSIONS.includes(version)) {
    const message = `unsupported allium version ${version}; this parser supports versions 1, 2 and 3`;
    return { version, diagnostics: [{ code: null, severity: 'error', message, location }] };
  }
  return { version, diagnostics: [] };
}

const IGNORE = /^--\s*allium-ignore\s+([A-Za-z0-9._,\- \t]+)$/;

function readSuppressions(comments: readonly Comment[], file: string): Suppression[] {
  const suppressions: Suppression[] = [];
  for (const comment of comments) {
    const match = IGNORE.exec(comment.text.trimEnd());
    if (match === null) continue;
    const codes = (match[1] ?? '')
      .split(',')
      .map((code) => code.trim())
      .filter((code) => code !== '');
    suppressions.push({ codes, location: { file, line: comment.line, col: comment.col } });
  }
  return suppressions;
}
