// Colour and cursor escapes (CSI sequences) some runners print even into pipes.
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;

/** Removes ANSI escape sequences and carriage returns so that closing lines can be matched. */
export function stripAnsi(text: string): string {
  return text
    .replace(ANSI, '')
    .replace(/\r(?!\n)/g, '\n')
    .replace(/\r\n/g, '\n');
}
