import { describe, expect, it } from 'vitest';
import { assemblePrompt } from './assemble-prompt.js';
import { renderTemplate, templatePlaceholders, loadTemplate } from './render-template.js';
import { chainSpec, sampleContext, TOOL_LIBRARY_SPEC } from './spec-fixtures.test-helpers.js';
import { WORKER_PHASES } from './worker-phase.js';

const spec = {
  sources: [{ path: 'spec/library.allium', text: TOOL_LIBRARY_SPEC }],
  graph: { nodes: [], edges: [] },
};

describe('assemblePrompt', () => {
  it.each(WORKER_PHASES)('renders a complete %s prompt for a fixture', (phase) => {
    const { prompt, resultFile } = assemblePrompt(phase, sampleContext(), spec);
    expect(resultFile).toBe(`.allium-loop/tool-library/results/3-${phase}.json`);
    expect(prompt).toContain(`# Phase: ${phase}`);
    expect(prompt).toContain('Let members borrow and return tools');
    expect(prompt).toContain('`spec/library.allium`');
    expect(prompt).toContain('`test/borrow.test.ts`');
    expect(prompt).toContain('`src/library.ts`');
    expect(prompt).toContain('Borrow: marks the tool out — expected "out", received "shelved"');
    expect(prompt).toContain('rule:GiveBack (code-bug): the code never puts the tool back on the shelf');
    expect(prompt).toContain('spec/library.allium:40 undefined binding borrowing');
    expect(prompt).toContain('"May a worn tool be lent?" — assumed: yes, worn tools are lent');
    expect(prompt).toContain('Never edit, rename, delete, skip or weaken a generated test');
    expect(prompt).toContain('open question');
    expect(prompt).toContain('config');
    expect(prompt).toContain('-- allium-ignore');
    expect(prompt).toContain(`write a JSON document to \`${resultFile}\``);
    expect(prompt).toContain(`"const": "${phase}"`);
    expect(prompt).toContain('rule Borrow {');
    expect(prompt).not.toMatch(/\{\{\s*\w+\s*\}\}/);
    expect(prompt).not.toMatch(/\n{3,}/);
  });

  it('tells tend which constructs it may remove', () => {
    const { prompt } = assemblePrompt('tend', sampleContext(), spec);
    expect(prompt).toContain('Drop the condition field; nobody records it.');
    expect(prompt).toContain('Constructs this request allows you to remove: field:Tool.condition.');
  });

  it('inverts the red-check advice for code-first propagate', () => {
    const specFirst = assemblePrompt('propagate', sampleContext(), spec).prompt;
    const codeFirst = assemblePrompt('propagate', sampleContext({ mode: 'code-first' }), spec).prompt;
    expect(specFirst).toContain('the new tests should fail');
    expect(codeFirst).toContain('the new tests should pass against it');
  });

  it('says so when there is no previous verdict, no parked question and no spec', () => {
    const { previousVerdict, ...first } = sampleContext({ parkedQuestions: [] });
    expect(previousVerdict).toBeDefined();
    const { prompt } = assemblePrompt('elicit', first, { sources: [], graph: { nodes: [], edges: [] } });
    expect(prompt).toContain('None: this is the first pass.');
    expect(prompt).toContain('## Parked open questions\n\nNone.');
    expect(prompt).toContain('There is no spec yet.');
  });

  it('quotes only one slice of a 10-slice spec, a fraction of the whole-spec prompt', () => {
    const chains = chainSpec(10);
    const whole = assemblePrompt('propagate', sampleContext(), chains);
    const sliced = assemblePrompt('propagate', sampleContext({ slice: chains.slices[4]! }), chains);
    expect(sliced.prompt).toContain('## Your slice: chain 4');
    expect(sliced.prompt).toContain('rule Finish4 {');
    expect(sliced.prompt).not.toMatch(/\b(?:Finish|Announce|Thing|Panel|Size|Note)(?:[0-35-9])\b/);
    expect(whole.prompt).toMatch(/rule Finish9 \{/);
    const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
    // The quoted spec of one slice is under a fifth of the whole spec; the prompt shrinks by at least that much.
    expect(bytes(sliced.excerpt.text) * 5).toBeLessThan(bytes(whole.excerpt.text));
    expect(bytes(whole.prompt) - bytes(sliced.prompt)).toBeGreaterThan(bytes(whole.excerpt.text) * 0.7);
  });
});

describe('renderTemplate', () => {
  it('refuses a placeholder without a value', () => {
    expect(() => renderTemplate('hello {{who}}', {})).toThrow(/\{\{who\}\} has no value/);
  });

  it('does not expand placeholders inside inserted values', () => {
    expect(renderTemplate('a {{x}} b', { x: '{{y}}' })).toBe('a {{y}} b');
  });

  it.each(WORKER_PHASES)('the %s template uses only the placeholders the assembler fills', (phase) => {
    const known = [
      'goal',
      'slice',
      'paths',
      'verdict',
      'questions',
      'rules',
      'result',
      'modeAdvice',
      'tendRequest',
    ];
    expect(templatePlaceholders(loadTemplate(phase)).filter((p) => !known.includes(p))).toEqual([]);
  });
});
