/** The text that replaces every secret the redactor finds. */
export const REDACTED = '[REDACTED]';

/** Removes secrets from strings and from JSON-able values before anything is written or shown. */
export interface Redactor {
  /** Returns `s` with every secret replaced by `[REDACTED]`; text without secrets comes back unchanged. */
  text(s: string): string;
  /**
   * Returns a deep copy of a JSON-able value with every string redacted, and the whole string value of any
   * property whose name looks secret (`apiKey`, `password`, `authorization` …). Numbers, booleans and `null`
   * are kept; keys are kept.
   */
  value<T>(v: T): T;
}

/** Environment values shorter than this are not redacted: they are too likely to occur by chance. */
const MIN_ENV_SECRET_LENGTH = 6;

/** Name segments that mark an environment variable (or a property) as holding a secret. */
const SECRET_WORDS = new Set([
  'key',
  'apikey',
  'token',
  'secret',
  'password',
  'passwd',
  'pass',
  'passphrase',
  'credential',
  'credentials',
  'auth',
  'authorization',
  'pat',
  'cookie',
  'private',
  'signature',
]);

/** Name segments that say the variable holds a location, not the secret itself. */
const LOCATION_WORDS = new Set([
  'sock',
  'path',
  'dir',
  'file',
  'home',
  'url',
  'host',
  'port',
  'user',
  'name',
]);

/** Property names that contain a secret word but are ordinary fields of our own documents. */
const ORDINARY_PROPERTY_NAMES = new Set(['key', 'keys', 'tokens', 'idempotencyKey']);

/** Splits `GITHUB_API_TOKEN`, `githubApiToken` or `x-api-key` into lowercase words. */
function splitWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/** Names repeat (in assignments, in property keys); their verdicts are remembered. */
const nameVerdicts = new Map<string, boolean>();

/** True when a variable or property name says its value is a secret. */
function hasSecretName(name: string): boolean {
  let verdict = nameVerdicts.get(name);
  if (verdict === undefined) {
    verdict = judgeName(name);
    if (nameVerdicts.size < 10_000) nameVerdicts.set(name, verdict);
  }
  return verdict;
}

function judgeName(name: string): boolean {
  const words = splitWords(name);
  if (words.length === 0) return false;
  const last = words[words.length - 1]!;
  if (LOCATION_WORDS.has(last)) return false;
  // `PWD` alone is the working directory; `DB_PWD` is a password.
  if (words.length > 1 && last === 'pwd') return true;
  return words.some(
    (word) => SECRET_WORDS.has(word) || /(token|secret|password|passwd|credentials?)$/.test(word),
  );
}

/** True when an environment variable named `name` should have its value removed wherever it appears. */
export function isSecretEnvName(name: string): boolean {
  return hasSecretName(name);
}

/*
 * Every pattern below runs in time linear in the length of its input, whatever the input (issue 14 item 6: a
 * `[A-Za-z0-9_.-]*` prefix before a keyword made redaction quadratic, and a megabyte without a newline froze the
 * engine). The rules that keep it so:
 * - an unbounded repetition over a character class starts only where the previous character is outside that class
 *   (a lookbehind, not `\b`), so two attempts never scan the same run;
 * - a repetition that may fail after scanning is either bounded (`{0,64}`) or made atomic with the lookahead and
 *   back-reference idiom `(?=(X+))\1`, so a failed attempt does not backtrack through it;
 * - a block whose end may be missing (a PEM key) is found with one forward search for its end, and the search
 *   stops for good once an end is missing.
 * `tools/bench/redaction` measures it on adversarial megabytes.
 */

/** Known token shapes, each replaced whole. Ordered most specific first. */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /\bsk-ant-[A-Za-z0-9_-]{16,}/g,
  /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  /(?<![A-Za-z0-9_-])eyJ(?=([A-Za-z0-9_-]{6,}))\1\.eyJ(?=([A-Za-z0-9_-]{6,}))\2\.[A-Za-z0-9_-]*/g,
];

/** The first line of a PEM private key, and its last. */
const PEM_BEGIN = /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----/g;
const PEM_END = /-----END [A-Z ]{0,40}PRIVATE KEY-----/g;

/** Replaces every PEM private key block whole, in one forward pass. */
function redactPemBlocks(s: string): string {
  if (!s.includes('PRIVATE KEY-----')) return s;
  let out = '';
  let from = 0;
  PEM_BEGIN.lastIndex = 0;
  for (;;) {
    const begin = PEM_BEGIN.exec(s);
    if (begin === null) break;
    PEM_END.lastIndex = PEM_BEGIN.lastIndex;
    const end = PEM_END.exec(s);
    // No end after this header means no end after any later one either: stop here.
    if (end === null) break;
    out += s.slice(from, begin.index) + REDACTED;
    from = PEM_END.lastIndex;
    PEM_BEGIN.lastIndex = from;
  }
  return from === 0 ? s : out + s.slice(from);
}

/** `Bearer <token>` and `Authorization: Basic <token>`: the scheme word is kept, the credential removed. */
const AUTH_HEADER_PATTERN =
  /\b(Bearer|Authorization:[ \t]{0,8}(?:Basic|Bearer|Token))([ \t]{1,8})(?=([A-Za-z0-9._~+/=-]{12,}))(?=[A-Za-z._~+/=-]*\d)\3/gi;

/**
 * Credentials in URLs: `https://user:password@host` keeps the user and the host (the user may be empty, as in
 * `redis://:password@host`).
 */
const URL_CREDENTIAL_PATTERN =
  /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,31}:\/\/(?=([^\s:/@]*))\2:)(?=([^\s@/]+))\3(@)/gi;

/** Words that make an assignment's name worth a look; {@link hasSecretName} decides. */
const ASSIGNMENT_KEYWORD = 'api[_-]?key|secret|token|pass|pwd|access[_-]?key|private[_-]?key|auth';

/**
 * The name and separator of a possible assignment: a whole run of identifier characters (at most 200, taken
 * atomically) holding a keyword, an optional closing quote, then `=`, `:` or white space.
 */
const ASSIGNMENT_HEAD = new RegExp(
  `(?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]{0,200}?(?:${ASSIGNMENT_KEYWORD}))(?=([A-Za-z0-9_.-]{1,200}["']?))\\1` +
    `(?=([ \\t]{0,16}[=:][ \\t]{0,16}|[ \\t]{1,16}))\\2`,
  'gi',
);
/** Characters of an unquoted value. */
const BARE_VALUE = /[^\s"',;&()]*/y;
const QUOTED_VALUE_END = /[^"'\r\n]*/y;
const DIGIT = /\d/g;
const LETTER = /[A-Za-z]/g;

/**
 * Finds, for positions that only grow, where the run of a sticky pattern ends, or where the next match of a
 * global one starts. Each answer is reused while the position stays inside it, so one pass over a text costs
 * time linear in its length.
 */
function forwardScanner(s: string, pattern: RegExp, kind: 'run-end' | 'next'): (at: number) => number {
  let from = -1;
  let answer = -1;
  return (at) => {
    if (at >= from && at < answer) return answer;
    if (kind === 'next' && at >= from && at === answer) return answer;
    pattern.lastIndex = at;
    const match = pattern.exec(s);
    from = at;
    answer = kind === 'run-end' ? at + (match?.[0].length ?? 0) : (match?.index ?? s.length);
    return answer;
  };
}

/**
 * `api_key=…`, `"password": "…"`, `--token …`-like assignments whose name looks secret. Values: quoted, 6
 * characters or more; after `=`, any unquoted value of 4 characters or more that is not a call (`password=hunter`);
 * after `:` or white space, an unquoted value of 6 or more that mixes letters and digits (so `token: string` in
 * code stays).
 */
function redactAssignments(s: string): string {
  const bareEnd = forwardScanner(s, BARE_VALUE, 'run-end');
  const quotedEnd = forwardScanner(s, QUOTED_VALUE_END, 'run-end');
  const nextDigit = forwardScanner(s, DIGIT, 'next');
  const nextLetter = forwardScanner(s, LETTER, 'next');
  let out = '';
  let copied = 0;
  ASSIGNMENT_HEAD.lastIndex = 0;
  for (let head = ASSIGNMENT_HEAD.exec(s); head !== null; head = ASSIGNMENT_HEAD.exec(s)) {
    const name = head[1]!;
    const sep = head[2]!;
    const at = ASSIGNMENT_HEAD.lastIndex;
    if (!hasSecretName(name.replace(/["']/g, ''))) continue;
    const quote = s[at];
    let value: { start: number; end: number; after: number } | undefined;
    if (quote === '"' || quote === "'") {
      const end = quotedEnd(at + 1);
      if (s[end] === quote && end - (at + 1) >= 6) value = { start: at + 1, end, after: end + 1 };
    } else {
      const end = bareEnd(at);
      const length = end - at;
      const acceptable = sep.includes('=')
        ? length >= 4 && s[end] !== '('
        : length >= 6 && nextDigit(at) < end && nextLetter(at) < end;
      if (acceptable) value = { start: at, end, after: end };
    }
    if (value === undefined || s.startsWith(REDACTED, value.start)) continue;
    out += s.slice(copied, value.start) + REDACTED;
    copied = value.end;
    ASSIGNMENT_HEAD.lastIndex = value.after;
  }
  return copied === 0 ? s : out + s.slice(copied);
}

/** The values of secret-named variables, longest first (a value that contains another is removed whole). */
function secretEnvValues(env: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.trim().length < MIN_ENV_SECRET_LENGTH) continue;
    if (isSecretEnvName(name)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * Every token pattern and assignment needs one of these substrings, so only the lines that hold one are searched
 * with the full set, and text without any (almost all of it) is returned as is. Any case: `sk-`, `secret`,
 * `gh[pousr]_`, `github_pat_`, `glpat-`, `xox[abposre]-`, `akia`, `asia`, `aiza`, `auth` (so `authorization` too),
 * `npm_`, `eyj`, `pass`, `pwd`, `bearer`, `://`, `key` (so `private key` too), `token`. Only where a hit starts
 * matters (redactLines takes its whole line), so they are grouped by their first character: V8 then tries one group
 * at each position instead of every alternative (tools/bench/spec/README.md, tenth pass).
 */
const MAY_HOLD_SECRET_ANYWHERE =
  /s(?:k-|ecret)|g(?:h[pousr]_|ithub_pat_|lpat-)|xox[abposre]-|a(?:kia|sia|iza|uth)|npm_|eyj|p(?:ass|wd)|bearer|:\/\/|key|token/gi;

function redactText(s: string, envValues: readonly string[]): string {
  let out = s;
  // Plain substring search per value (no regular expression): linear in the text for each value.
  for (const value of envValues) if (out.includes(value)) out = out.split(value).join(REDACTED);
  // No test for those substrings first: redactLines's own search returns text without them as is, and a test
  // before it read the text up to the first one twice (a 50k-line spec's report has one in nearly every 64 KiB piece:
  // 12 → 9 ms).
  return redactLines(redactPemBlocks(out));
}

/** How far past a line that may hold a secret the search goes on in one piece (fewer, longer searches). */
const STRETCH = 1024;

/**
 * Runs the line-local patterns (all but the PEM block) on stretches of whole lines around each line that holds one
 * of {@link MAY_HOLD_SECRET_ANYWHERE}'s substrings (that line and those starting within {@link STRETCH} characters after
 * it), and copies the text between stretches as is. None of those patterns matches across a line break, so this
 * finds exactly what running them over the whole text finds; a big report with a few such lines costs one search,
 * a transcript with such words on every line costs what the whole text would. Linear: each stretch ends at a line
 * break and the next search starts there.
 */
function redactLines(s: string): string {
  let out = '';
  let copied = 0;
  let stretchStart = -1;
  let stretchEnd = -1;
  const flush = (): void => {
    if (stretchStart === -1) return;
    out += s.slice(copied, stretchStart) + redactLine(s.slice(stretchStart, stretchEnd));
    copied = stretchEnd;
  };
  MAY_HOLD_SECRET_ANYWHERE.lastIndex = 0;
  for (let hit = MAY_HOLD_SECRET_ANYWHERE.exec(s); hit !== null; hit = MAY_HOLD_SECRET_ANYWHERE.exec(s)) {
    const start = s.lastIndexOf('\n', hit.index) + 1;
    const reach = s.indexOf('\n', Math.min(hit.index + STRETCH, s.length));
    const end = reach === -1 ? s.length : reach;
    if (stretchStart !== -1 && start <= stretchEnd + 1) stretchEnd = end;
    else {
      flush();
      stretchStart = start;
      stretchEnd = end;
    }
    MAY_HOLD_SECRET_ANYWHERE.lastIndex = end;
  }
  flush();
  return out + s.slice(copied);
}

/** Token shapes, authorization headers, URL credentials and secret assignments within whole lines. */
function redactLine(line: string): string {
  let out = line;
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, REDACTED);
  out = out.replace(
    AUTH_HEADER_PATTERN,
    (_match, scheme: string, gap: string) => `${scheme}${gap}${REDACTED}`,
  );
  out = out.replace(
    URL_CREDENTIAL_PATTERN,
    (match, prefix: string, _user: string, password: string, at: string) =>
      password === REDACTED ? match : `${prefix}${REDACTED}${at}`,
  );
  return redactAssignments(out);
}

function redactDeep(v: unknown, text: (s: string) => string): unknown {
  if (typeof v === 'string') return text(v);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const items = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i += 1) items[i] = redactDeep(v[i], text);
    return items;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) {
    const item = (v as Record<string, unknown>)[key];
    const secretProperty = typeof item === 'string' && item.length > 0 && isSecretPropertyName(key);
    out[key] = secretProperty ? REDACTED : redactDeep(item, text);
  }
  return out;
}

/** Property names repeat across thousands of entries; their verdicts are remembered. */
const propertyVerdicts = new Map<string, boolean>();

function isSecretPropertyName(name: string): boolean {
  let verdict = propertyVerdicts.get(name);
  if (verdict === undefined) {
    verdict = !ORDINARY_PROPERTY_NAMES.has(name) && hasSecretName(name);
    if (propertyVerdicts.size < 10_000) propertyVerdicts.set(name, verdict);
  }
  return verdict;
}

/**
 * Builds a redactor from an environment (usually `process.env`, read by the caller). It removes the values of
 * variables whose names look secret (`*_KEY`, `*_TOKEN`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`, `*AUTH*` …,
 * values of 6 characters or more) and strings shaped like API keys and tokens: Anthropic `sk-ant-…`, OpenAI
 * `sk-…`/`sk-proj-…`, GitHub `ghp_`/`gho_`/`ghs_`/`github_pat_`, Slack `xox?-`, AWS `AKIA…`, Google `AIza…`,
 * GitLab `glpat-`, npm `npm_`, JWTs, PEM private keys, `Bearer …`, URL passwords and `key=value` assignments.
 * Git object ids, file paths and ordinary prose are left alone. Never throws.
 */
export function createRedactor(env: Readonly<Record<string, string | undefined>>): Redactor {
  const envValues = secretEnvValues(env);
  const text = (s: string): string => redactText(s, envValues);
  return {
    text,
    value: <T>(v: T): T => redactDeep(v, text) as T,
  };
}
