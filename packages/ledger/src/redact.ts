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

/** True when a variable or property name says its value is a secret. */
function hasSecretName(name: string): boolean {
  const words = splitWords(name);
  if (words.length === 0) return false;
  const last = words[words.length - 1]!;
  if (LOCATION_WORDS.has(last)) return false;
  return words.some(
    (word) => SECRET_WORDS.has(word) || /(token|secret|password|passwd|credentials?)$/.test(word),
  );
}

/** True when an environment variable named `name` should have its value removed wherever it appears. */
export function isSecretEnvName(name: string): boolean {
  return hasSecretName(name);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Known token shapes, each replaced whole. Ordered most specific first. */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  /\bsk-ant-[A-Za-z0-9_-]{16,}/g,
  /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bxox[abposre]-[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\bglpat-[A-Za-z0-9_-]{20,}/g,
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  /\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*/g,
];

/** `Bearer <token>` and `Authorization: Basic <token>`: the scheme word is kept, the credential removed. */
const AUTH_HEADER_PATTERN =
  /\b(Bearer|Authorization:\s*(?:Basic|Bearer|Token))(\s+)(?=[A-Za-z0-9._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}/gi;

/** Credentials in URLs: `https://user:password@host` keeps the user and the host. */
const URL_CREDENTIAL_PATTERN = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]{3,})(@)/gi;

/**
 * `api_key=…`, `"password": "…"`, `--token …`-like assignments whose name looks secret. Unquoted values must mix
 * letters and digits (so `token: string` in code stays); quoted values need only be 6 characters or more.
 */
const ASSIGNMENT_PATTERN =
  /([A-Za-z0-9_.-]*(?:api[_-]?key|secret|token|passw(?:or)?d|access[_-]?key|private[_-]?key|auth)[A-Za-z0-9_.-]*["']?)(\s*(?:=|:|\s)\s*)(?:(["'])([^"'\r\n]{6,}?)\3|((?=[^\s"',;&()]*\d)(?=[^\s"',;&()]*[A-Za-z])[^\s"',;&()]{6,}))/gi;

function redactAssignments(s: string): string {
  return s.replace(
    ASSIGNMENT_PATTERN,
    (match, name: string, sep: string, quote: string | undefined, quoted: string | undefined) => {
      if (!hasSecretName(name.replace(/["']/g, ''))) return match;
      if (quoted !== undefined && quote !== undefined) {
        return quoted === REDACTED ? match : `${name}${sep}${quote}${REDACTED}${quote}`;
      }
      return `${name}${sep}${REDACTED}`;
    },
  );
}

function buildEnvPattern(env: Readonly<Record<string, string | undefined>>): RegExp | undefined {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.trim().length < MIN_ENV_SECRET_LENGTH) continue;
    if (isSecretEnvName(name)) values.add(value);
  }
  if (values.size === 0) return undefined;
  const sorted = [...values].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return new RegExp(sorted.join('|'), 'g');
}

/**
 * Cheap test run before the full set: every token pattern and assignment needs one of these substrings, so text
 * without them (almost all of it) is returned as is.
 */
const MAY_HOLD_SECRET =
  /sk-|gh[pousr]_|github_pat_|xox[abposre]-|AKIA|ASIA|AIza|glpat-|npm_|eyJ|PRIVATE KEY|bearer|authoriz|:\/\/|key|secret|token|passw|auth/i;

function redactText(s: string, envPattern: RegExp | undefined): string {
  const envHit = envPattern !== undefined && envPattern.test(s);
  if (envPattern !== undefined) envPattern.lastIndex = 0;
  if (!envHit && !MAY_HOLD_SECRET.test(s)) return s;
  let out = envHit && envPattern !== undefined ? s.replace(envPattern, REDACTED) : s;
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, REDACTED);
  out = out.replace(AUTH_HEADER_PATTERN, `$1$2${REDACTED}`);
  out = out.replace(URL_CREDENTIAL_PATTERN, `$1${REDACTED}$3`);
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
  const envPattern = buildEnvPattern(env);
  const text = (s: string): string => redactText(s, envPattern);
  return {
    text,
    value: <T>(v: T): T => redactDeep(v, text) as T,
  };
}
