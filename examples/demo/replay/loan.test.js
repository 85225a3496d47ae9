import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as desk from '../src/desk.js';

const DAY = 86_400_000;

test('LendBook lends a Book to a Member: an active loan (Loan.status) due after config.loan_period', () => {
  const book = desk.createBook('Dune');
  const loan = desk.lendBook({ name: 'Ada' }, book, 0);
  assert.equal(book.status, 'on_loan');
  assert.equal(loan?.status, 'active');
  assert.equal(loan.dueAt, 14 * DAY);
});

test('ReturnBook closes the loan (Loan.status active → returned) and puts the book back on the shelf', () => {
  const book = desk.createBook('Dune');
  const loan = desk.lendBook({ name: 'Ada' }, book, 0);
  desk.returnBook(loan);
  assert.equal(loan.status, 'returned');
  assert.equal(book.status, 'shelved');
});

test('MarkOverdue marks an active loan overdue once it is due', () => {
  const loan = desk.lendBook({ name: 'Ada' }, desk.createBook('Dune'), 0);
  desk.markOverdue(loan, 13 * DAY);
  assert.equal(loan.status, 'active');
  desk.markOverdue(loan, 14 * DAY);
  assert.equal(loan.status, 'overdue');
});
