// The lending desk: books are lent from the shelf, loans fall due and are returned.

const DAY = 86_400_000;

/** Values of the spec's `config` block. */
export const config = { loanPeriodDays: 14 };

/** A new book, on the shelf. */
export function createBook(title) {
  return { title, status: 'shelved' };
}

/** LendBook: a shelved book goes on loan and an active loan is opened, due after the loan period. */
export function lendBook(member, book, now = Date.now()) {
  if (book.status !== 'shelved') throw new Error(`${book.title} is not on the shelf`);
  book.status = 'on_loan';
  return { book, borrower: member, dueAt: now + config.loanPeriodDays * DAY, status: 'active' };
}

/** ReturnBook: an active or overdue loan is returned. */
export function returnBook(loan) {
  if (loan.status !== 'active' && loan.status !== 'overdue') throw new Error('loan is already returned');
  loan.status = 'returned';
  loan.book.status = 'shelved';
}

/** MarkOverdue: a loan past its due time becomes overdue. */
export function markOverdue(loan, now = Date.now()) {
  if (loan.dueAt <= now) loan.status = 'overdue';
}
