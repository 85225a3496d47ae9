// The lending desk: books are lent from the shelf.

/** A new book, on the shelf. */
export function createBook(title) {
  return { title, status: 'shelved' };
}

/** LendBook: a shelved book goes on loan to a member. */
export function lendBook(member, book) {
  if (book.status !== 'shelved') throw new Error(`${book.title} is not on the shelf`);
  book.status = 'on_loan';
}
