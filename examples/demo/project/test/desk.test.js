import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as desk from '../src/desk.js';

test('LendBook puts a shelved book on loan', () => {
  const book = desk.createBook('Dune');
  desk.lendBook({ name: 'Ada' }, book);
  assert.equal(book.status, 'on_loan');
});

test('LendBook refuses a book that is already on loan', () => {
  const book = desk.createBook('Dune');
  desk.lendBook({ name: 'Ada' }, book);
  assert.throws(() => desk.lendBook({ name: 'Grace' }, book), /not on the shelf/);
});
