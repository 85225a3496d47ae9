import { describe, expect, it } from 'vitest';
import { parseWorkerResult } from './parse-result.js';
import { findPrintedRecord } from './printed-record.js';

const WEED = {
  verdict: 'dirty',
  divergences: [
    {
      subject: 'GiveBack',
      classification: 'code-bug',
      spec: 'rule GiveBack { ensures x }',
      code: 'if (a) {',
    },
  ],
  summary: '1 divergence',
};
const PROPAGATE = {
  obligations: { total: 1, covered: 1, uncovered: 0 },
  uncovered_obligations: [],
  generated_tests: [{ path: 'test/a.test.mjs', hash: 'sha256:abc' }],
  summary: '1 obligations, 1 covered, 0 uncovered',
};

const fenced = (value: unknown, language = 'json') =>
  `Done. Here is the record:\n\n\`\`\`${language}\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`;

describe('findPrintedRecord', () => {
  it('reads a fenced ```json block, braces inside its strings included', () => {
    const found = findPrintedRecord('weed', fenced(WEED));
    expect(found?.form).toBe('fenced');
    expect(JSON.parse(found!.text)).toEqual(WEED);
    const parsed = parseWorkerResult('weed', found!.text);
    expect(parsed.ok && parsed.value.verdict).toBe('dirty');
  });

  it('reads a plain ``` fence and a ~~~ fence', () => {
    expect(JSON.parse(findPrintedRecord('propagate', fenced(PROPAGATE, ''))!.text)).toEqual(PROPAGATE);
    const tilde = `~~~json\n${JSON.stringify(PROPAGATE)}\n~~~`;
    expect(JSON.parse(findPrintedRecord('propagate', tilde)!.text)).toEqual(PROPAGATE);
  });

  it('reads a bare JSON object in the prose, past other braces', () => {
    const message = `I checked {GiveBack} and the rule {x}. Result: ${JSON.stringify({ phase: 'weed', ...WEED })} — that's all.`;
    const found = findPrintedRecord('weed', message);
    expect(found?.form).toBe('bare');
    expect(JSON.parse(found!.text)).toEqual({ phase: 'weed', ...WEED });
  });

  it('takes the last valid record when the message shows several', () => {
    const first = { ...WEED, summary: 'first draft' };
    const last = { ...WEED, summary: 'final' };
    const message = `${fenced(first)}\nOn reflection:\n${fenced(last)}`;
    expect(JSON.parse(findPrintedRecord('weed', message)!.text)).toMatchObject({ summary: 'final' });
  });

  it('a record that fails the schema is still found, so it fails as a bad result file does', () => {
    const bad = { phase: 'weed', verdict: 'mostly', divergences: [], summary: '' };
    const found = findPrintedRecord('weed', fenced(bad));
    expect(found).toBeDefined();
    const parsed = parseWorkerResult('weed', found!.text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.join('; ')).toMatch(/verdict/);
    // Without `phase`, a field of the phase's own schema marks it as the record.
    const noPhase = findPrintedRecord('propagate', fenced({ generated_tests: 'all of them', summary: '' }));
    expect(noPhase).toBeDefined();
    expect(parseWorkerResult('propagate', noPhase!.text).ok).toBe(false);
  });

  it.each([
    ['prose only', 'All done; the spec and the code agree.'],
    ['a JSON object that is no record', fenced({ compilerOptions: { strict: true } })],
    ['only shared fields', fenced({ summary: 'done' })],
    ["another phase's record", fenced({ phase: 'tend', spec_path: 'a.allium', summary: '' })],
    ['a fenced block that is not JSON', '```json\n{ "verdict": clean\n```'],
    ['a TypeScript block', `\`\`\`ts\n${JSON.stringify(WEED)}\n\`\`\``],
    ['an unclosed fence and an unclosed brace', '```json\n{ "verdict": "clean", '],
    ['an empty message', ''],
  ])('finds nothing in %s', (_what, message) => {
    expect(findPrintedRecord('weed', message)).toBeUndefined();
  });

  it('a valid record wins over a later object that only looks like one', () => {
    const message = `${fenced(WEED)}\nFor reference, a dirty verdict looks like {"verdict": "dirty"}.`;
    expect(JSON.parse(findPrintedRecord('weed', message)!.text)).toEqual(WEED);
  });

  it('searches a huge, hostile message and still finds the record at its end', { timeout: 120_000 }, () => {
    const noise = `${'{"a": "'.repeat(20_000)}\n${'```\n'.repeat(5_000)}${'````x\n'.repeat(5_000)}`;
    const found = findPrintedRecord('weed', `${noise}\n\n${fenced(WEED)}`);
    expect(JSON.parse(found!.text)).toEqual(WEED);
  });

  it('searches only the last MiB of the message', () => {
    expect(findPrintedRecord('weed', `${fenced(WEED)}${'.'.repeat(1024 * 1024)}`)).toBeUndefined();
    expect(findPrintedRecord('weed', `${'.'.repeat(1024 * 1024)}${fenced(WEED)}`)).toBeDefined();
  });
});
