import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, isSecretEnvName, REDACTED } from './redact.js';

const none = createRedactor({});

// Fixtures are assembled from parts so that secret scanners do not flag this file.
const repeat = (s: string, n: number): string => s.repeat(n);
const ANTHROPIC = `sk-ant-api03-${repeat('Ab3_', 20)}xyz`;
const OPENAI = `sk-${repeat('aB3d', 12)}`;
const OPENAI_PROJ = `sk-proj-${repeat('Zy9-', 10)}`;
const GH_PAT = `ghp_${repeat('a1B2', 9)}`;
const GH_OAUTH = `gho_${repeat('Q7w', 12)}`;
const GH_SERVER = `ghs_${repeat('m0N', 12)}`;
const GH_FINE = `github_pat_11AAAAAAA0${repeat('x9Y_', 12)}`;
const SLACK = `xoxb-123456789012-${repeat('aBc1', 6)}`;
const AWS = `AKIA${'IOSFODNN7EXAMPLE'}`;
const AWS_TEMPORARY = `ASIA${'Q3EXAMPLE7ZZYYW9'}`;
const GITLAB = `glpat-${repeat('x7Y-', 6)}`;
const NPM = `npm_${repeat('a1B2c3', 6)}`;
const GOOGLE = `AIza${repeat('Sy0_', 8)}abc`;
const JWT = [
  'eyJhbGciOiJIUzI1NiJ9',
  'eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  'dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk',
].join('.');

describe('createRedactor: token shapes', () => {
  it.each([
    ['Anthropic', ANTHROPIC],
    ['OpenAI', OPENAI],
    ['OpenAI project', OPENAI_PROJ],
    ['GitHub classic PAT', GH_PAT],
    ['GitHub OAuth', GH_OAUTH],
    ['GitHub server', GH_SERVER],
    ['GitHub fine-grained PAT', GH_FINE],
    ['Slack', SLACK],
    ['AWS access key id', AWS],
    ['AWS temporary access key id', AWS_TEMPORARY],
    ['GitLab personal access token', GITLAB],
    ['npm token', NPM],
    ['Google API key', GOOGLE],
    ['JWT', JWT],
  ])('removes a %s token inside text', (_name, token) => {
    const out = none.text(`before ${token} after`);
    expect(out).toBe(`before ${REDACTED} after`);
  });

  it('removes a token at the start of a line and inside JSON', () => {
    expect(none.text(`${OPENAI}\nnext`)).toBe(`${REDACTED}\nnext`);
    expect(none.text(JSON.stringify({ value: GH_PAT }))).toBe(`{"value":"${REDACTED}"}`);
  });

  it('finds secrets on any line of a long report, at either edge of the line, and keeps every other line', () => {
    // Only lines that may hold a secret are searched; each pattern must still see its whole line.
    const plain = Array.from({ length: 2_000 }, (_, i) => `  "message": "Value 'Order${i}' is unused",`);
    const lines = [...plain];
    lines[0] = `${GH_PAT} starts the first line`;
    lines[700] = `\tapi_key=abcdef123456`;
    lines[701] = 'token: string';
    lines[1_200] = `url: https://user:hunter2pass@example.com/x\r`;
    lines[1_999] = `ends the last line with Bearer abc123def456ghi789`;
    const out = none.text(lines.join('\n')).split('\n');
    expect(out[0]).toBe(`${REDACTED} starts the first line`);
    expect(out[700]).toBe(`\tapi_key=${REDACTED}`);
    expect(out[701]).toBe('token: string');
    expect(out[1_200]).toBe(`url: https://user:${REDACTED}@example.com/x\r`);
    expect(out[1_999]).toBe(`ends the last line with Bearer ${REDACTED}`);
    const untouched = out.filter((line, i) => ![0, 700, 701, 1_200, 1_999].includes(i));
    expect(untouched).toEqual(plain.filter((line, i) => ![0, 700, 701, 1_200, 1_999].includes(i)));
  });

  it('finds each kind of secret in any case on one line of a long report (the search for lines that may hold one)', () => {
    const plain = Array.from({ length: 500 }, (_, i) => `  "message": "Value 'Order${i}' is unused",`);
    const secrets: [string, string][] = [
      [`a ${AWS_TEMPORARY} here`, `a ${REDACTED} here`],
      [`a ${GITLAB} here`, `a ${REDACTED} here`],
      [`a ${NPM} here`, `a ${REDACTED} here`],
      [`a ${SLACK} here`, `a ${REDACTED} here`],
      [`a ${GOOGLE} here`, `a ${REDACTED} here`],
      [`a ${GH_FINE} here`, `a ${REDACTED} here`],
      [`a ${JWT} here`, `a ${REDACTED} here`],
      ['DB_PWD=s3cretValue9', `DB_PWD=${REDACTED}`],
      ['Db_Pass: hunter22x', `Db_Pass: ${REDACTED}`],
      ['SECRET=abcd1234', `SECRET=${REDACTED}`],
      ['auth=zz99yy88', `auth=${REDACTED}`],
      ['Authorization: Basic dXNlcjpwYXNzd29yZA1', `Authorization: Basic ${REDACTED}`],
      ['AUTHORIZATION: Bearer abc123def456ghi789', `AUTHORIZATION: Bearer ${REDACTED}`],
      ['Api-Key=zz99yy88', `Api-Key=${REDACTED}`],
      ['HTTPS://user:hunter2pass@example.com', `HTTPS://user:${REDACTED}@example.com`],
    ];
    for (const [line, redacted] of secrets) {
      const lines = [...plain];
      lines[250] = line;
      const out = none.text(lines.join('\n')).split('\n');
      expect(out[250]).toBe(redacted);
      expect(out.filter((_, i) => i !== 250)).toEqual(plain.filter((_, i) => i !== 250));
    }
  });

  it('keeps the scheme of a Bearer header and removes the credential', () => {
    expect(none.text('curl -H "Authorization: Bearer abc123def456ghi789"')).toBe(
      `curl -H "Authorization: Bearer ${REDACTED}"`,
    );
    expect(none.text('Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==')).toBe(
      `Authorization: Basic ${REDACTED}`,
    );
  });

  it('removes a PEM private key block whole', () => {
    const pem = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'MIIEow1IBAAKCAQEA',
      '-----END RSA PRIVATE KEY-----',
    ].join('\n');
    expect(none.text(`key:\n${pem}\ndone`)).toBe(`key:\n${REDACTED}\ndone`);
  });

  it('removes the password of a URL and keeps user and host', () => {
    expect(none.text('git clone https://bob:s3cretpw@example.com/repo.git')).toBe(
      `git clone https://bob:${REDACTED}@example.com/repo.git`,
    );
  });

  it.each([
    ['api_key=abc123def456', `api_key=${REDACTED}`],
    ['export GITHUB_TOKEN=ghx9abc123', `export GITHUB_TOKEN=${REDACTED}`],
    ['password: hunter2hunter', `password: ${REDACTED}`],
    ['"client_secret": "open sesame now"', `"client_secret": "${REDACTED}"`],
    ["--auth-token 'zz9plural'", `--auth-token '${REDACTED}'`],
    ['AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', `AWS_SECRET_ACCESS_KEY=${REDACTED}`],
  ])('removes the value of the assignment %s', (input, expected) => {
    expect(none.text(input)).toBe(expected);
  });
});

describe('createRedactor: environment values', () => {
  const env = {
    ANTHROPIC_API_KEY: 'plainvalue-without-shape',
    MY_SERVICE_TOKEN: 'tok-value-99',
    DB_PASSWORD: 'correcthorse',
    AUTH: 'authvalue',
    GIT_CREDENTIALS: 'credvalue',
    SHORT_TOKEN: 'abc',
    HOME: '/home/alice',
    PATH: '/usr/bin:/bin',
    GIT_AUTHOR_NAME: 'Alice Example',
    SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
    TOKENIZERS_PARALLELISM: 'falsefalse',
    UNSET_SECRET: undefined,
  };
  const r = createRedactor(env);

  it('removes every value of a secret-named variable wherever it appears', () => {
    expect(r.text('key plainvalue-without-shape and tok-value-99 and correcthorse')).toBe(
      `key ${REDACTED} and ${REDACTED} and ${REDACTED}`,
    );
    expect(r.text('a authvalue b credvalue')).toBe(`a ${REDACTED} b ${REDACTED}`);
  });

  it('keeps short values and values of ordinary variables', () => {
    const text = 'abc /home/alice /usr/bin:/bin Alice Example /tmp/ssh-agent.sock falsefalse';
    expect(r.text(text)).toBe(text);
  });

  it('escapes values that contain regular-expression characters', () => {
    const r2 = createRedactor({ X_SECRET: 'a.b*c(d)+' });
    expect(r2.text('see a.b*c(d)+ and aXbbc(d)')).toBe(`see ${REDACTED} and aXbbc(d)`);
  });

  it.each([
    ['OPENAI_API_KEY', true],
    ['GH_TOKEN', true],
    ['githubToken', true],
    ['NPM_AUTH', true],
    ['MYSQL_PASSWORD', true],
    ['AWS_SECRET_ACCESS_KEY', true],
    ['GOOGLE_APPLICATION_CREDENTIALS', true],
    ['PWD', false],
    ['MONKEY', false],
    ['AUTHOR', false],
    ['SSH_AUTH_SOCK', false],
    ['KEY_FILE', false],
    ['TOKENIZERS_PARALLELISM', false],
  ])('classifies %s as secret: %s', (name, expected) => {
    expect(isSecretEnvName(name)).toBe(expected);
  });
});

describe('createRedactor: no false positives', () => {
  it.each([
    'The quick brown fox jumps over the lazy dog; tests 14/17 passed.',
    'commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904 and tree e69de29bb2d1d6434b8b29ae775ad8c2e48c5391',
    'sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    '/work/main/packages/ledger/src/redact.ts:42 and C:\\Users\\alice\\secret-notes\\todo.md',
    '.allium-loop/add-gift-cards/results/3-implement.json',
    'const token: string = readToken(); // the token is read lazily',
    'function authorize(password: string, apiKey: Key) {}',
    'Use a Bearer token in the Authorization header.',
    'task-runner risk-free desk-lamp ask-me-anything',
    'a secret plan, the password field, my API key policy',
    'idempotency key tick-3-implement-abc123',
  ])('leaves %j unchanged', (text) => {
    expect(none.text(text)).toBe(text);
  });

  it('leaves arbitrary hex digests and kebab-case paths unchanged (property)', () => {
    const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
    const path = fc.array(fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(hex, path, (h, segments) => {
        const text = `${h} /${segments.join('/')}.ts`;
        return none.text(text) === text;
      }),
      { numRuns: 300 },
    );
  });
});

describe('createRedactor.value', () => {
  const r = createRedactor({ SERVICE_TOKEN: 'service-token-value' });

  it('redacts strings deep inside objects and arrays and keeps other values', () => {
    const input = {
      tick: 3,
      ok: true,
      none: null,
      nested: { lines: ['x service-token-value y', `z ${GH_PAT}`], n: 1.5 },
    };
    expect(r.value(input)).toEqual({
      tick: 3,
      ok: true,
      none: null,
      nested: { lines: [`x ${REDACTED} y`, `z ${REDACTED}`], n: 1.5 },
    });
  });

  it('redacts the whole string value of secret-named properties and keeps ordinary ones', () => {
    const input = { apiKey: 'anything', headers: { authorization: 'whatever' }, key: 'tick-3', tokens: 1200 };
    expect(r.value(input)).toEqual({
      apiKey: REDACTED,
      headers: { authorization: REDACTED },
      key: 'tick-3',
      tokens: 1200,
    });
  });

  it('does not mutate its input', () => {
    const input = { list: [`a ${OPENAI}`] };
    r.value(input);
    expect(input.list[0]).toBe(`a ${OPENAI}`);
  });

  it('is idempotent', () => {
    const text = `x ${OPENAI} api_key=abc123def service-token-value`;
    expect(r.text(r.text(text))).toBe(r.text(text));
  });
});

describe('createRedactor: passwords and pass names (issue 14 item 16)', () => {
  it.each([
    ['password=correcthorse', `password=${REDACTED}`],
    ['DB_PASS=hunter', `DB_PASS=${REDACTED}`],
    ['export SMTP_PASSWORD=letmein', `export SMTP_PASSWORD=${REDACTED}`],
    ['MYSQL_PWD = tr0ub4dor', `MYSQL_PWD = ${REDACTED}`],
    ['redis://:hunter2@cache:6379/0', `redis://:${REDACTED}@cache:6379/0`],
    ['postgres://app:pw@db/x', `postgres://app:${REDACTED}@db/x`],
    ['config.auth.token=abcd1234efgh', `config.auth.token=${REDACTED}`],
  ])('removes the secret of %s', (input, expected) => {
    expect(none.text(input)).toBe(expected);
  });

  it.each(['const token = getToken();', 'password: string', 'the pass rate is 90%', 'bypass=true'])(
    'leaves %j unchanged',
    (text) => {
      expect(none.text(text)).toBe(text);
    },
  );

  it('treats *_PASS and *_PWD variables as secret, but not PWD itself', () => {
    expect(isSecretEnvName('SMTP_PASS')).toBe(true);
    expect(isSecretEnvName('DB_PWD')).toBe(true);
    expect(isSecretEnvName('PWD')).toBe(false);
    expect(createRedactor({ SMTP_PASS: 'plain-pass-value' }).text('x plain-pass-value y')).toBe(
      `x ${REDACTED} y`,
    );
  });
});

describe('createRedactor: adversarial megabytes finish (issue 14 item 6)', () => {
  // Each of these took from seconds (16 KiB) to beyond ten minutes (1 MiB) with the quadratic redactor; the
  // limit below is generous, a linear redactor needs milliseconds. tools/bench/redaction measures the time.
  const MiB = 1024 * 1024;
  const fill = (unit: string, tail = ''): string => unit.repeat(Math.ceil(MiB / unit.length)) + tail;
  it.each([
    ['identifier run', fill('a', ' key')],
    ['near-miss keywords', fill('tokenx_secret-passwd.')],
    ['assignments without digits', fill('token:')],
    ['dotted words', fill('a.b-c+', ' auth')],
    ['PEM headers without an end', fill('-----BEGIN RSA PRIVATE KEY-----')],
    ['JWT-like runs', fill('eyJabcdefgh-')],
    ['many spaces after a name', `password${' '.repeat(MiB)}x`],
    ['bearer runs', fill(`Bearer ${'x'.repeat(64)} `)],
  ])('redacts a megabyte of %s without a newline', { timeout: 60_000 }, (_name, text) => {
    const out = none.text(text);
    expect(out.length).toBeGreaterThan(0);
  });

  it('still finds a secret at the end of an adversarial megabyte', { timeout: 60_000 }, () => {
    const out = none.text(`${fill('tokenx_')} password=correcthorse ${GH_PAT}`);
    expect(out.endsWith(` password=${REDACTED} ${REDACTED}`)).toBe(true);
  });
});
