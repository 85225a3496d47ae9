import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as desk from '../src/desk.js';

const DAY = 86_400_000;

test('MarkOverdue creates a Notice for the overdue loan', () => {
  const loan = desk.lendBook({ name: 'Ada' }, desk.createBook('Dune'), 0);
  const notice = desk.markOverdue(loan, 14 * DAY);
  assert.equal(notice?.loan, loan);
});

test('MarkOverdue creates no Notice before the loan is due', () => {
  const loan = desk.lendBook({ name: 'Ada' }, desk.createBook('Dune'), 0);
  assert.equal(desk.markOverdue(loan, DAY), undefined);
});
