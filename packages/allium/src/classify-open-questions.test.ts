import { describe, expect, it } from 'vitest';
import { collectOpenQuestions } from './analyze-specs.js';
import { classifyOpenQuestions, questionKey } from './classify-open-questions.js';
import { parseSpec } from './parse-spec.js';

const location = { file: 'a.allium', line: 1, col: 1 };

describe('classifyOpenQuestions (the one rule)', () => {
  it('blocking only when recorded as blocking; a question classified by nobody is parked', () => {
    const split = classifyOpenQuestions(
      [
        { text: 'Who  approves refunds?', location },
        { text: 'Is there a cap?', location },
      ],
      ['who approves refunds'],
    );
    expect(split.blocking.map((question) => question.text)).toEqual(['Who  approves refunds?']);
    expect(split.parked.map((question) => question.text)).toEqual(['Is there a cap?']);
  });

  it('with nothing recorded every question is parked', () => {
    const split = classifyOpenQuestions([{ text: 'Is there a cap?', location }], []);
    expect(split).toEqual({ blocking: [], parked: [{ text: 'Is there a cap?', location }] });
  });

  it('keys ignore case, punctuation and spacing', () => {
    expect(questionKey('  Who "approves"   refunds?! ')).toBe('who approves refunds');
  });
});

describe('collectOpenQuestions', () => {
  it('finds questions at the top level and nested inside blocks, in source order', () => {
    const spec = parseSpec(
      [
        '-- allium: 3',
        '',
        'open question "Top?"',
        '',
        'entity Card {',
        '  balance: Integer',
        '  open question "Inside?"',
        '}',
        '',
      ].join('\n'),
      'a.allium',
    );
    expect(collectOpenQuestions(spec).map((q) => [q.text, q.location.line])).toEqual([
      ['Top?', 3],
      ['Inside?', 7],
    ]);
  });
});
