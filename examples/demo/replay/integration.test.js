import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as desk from '../src/desk.js';

const DAY = 86_400_000;

test('LendBook → MarkOverdue → ReturnBook: an overdue loan is returned and the book is shelved again', () => {
  const book = desk.createBook('Dune');
  const loan = desk.lendBook({ name: 'Ada' }, book, 0);
  const notice = desk.markOverdue(loan, 15 * DAY);
  assert.equal(notice?.loan, loan);
  desk.returnBook(loan);
  assert.equal(loan.status, 'returned');
  assert.equal(book.status, 'shelved');
  assert.equal(desk.markOverdue(loan, 30 * DAY), undefined);
});
