/** One simple command of a shell line: the variable assignments before it, its program and its arguments. */
export interface SimpleCommand {
  readonly assignments: Readonly<Record<string, string>>;
  readonly program: string | undefined;
  readonly args: readonly string[];
}

/** Words that only prefix the real program (`env X=1 node a.js`, `exec make`, `npx vitest`). */
const PREFIXES = new Set(['env', 'exec', 'command', 'time', 'nice', 'nohup', 'npx', 'builtin', 'xargs']);

function words(segment: string): string[] {
  const found: string[] = [];
  for (const match of segment.matchAll(/(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"']+)+/g)) {
    found.push(
      match[0].replace(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g, (_all, d?: string, q?: string) => d ?? q ?? ''),
    );
  }
  return found;
}

/**
 * Splits a shell command line into simple commands (at `;`, `&&`, `||`, `|`, `&`, newlines, parentheses and
 * command substitutions) and each into assignments, program and arguments. A reading, not a shell: quotes are
 * stripped, expansions are left as written, redirections stay arguments. `export A=b` yields an assignment with no
 * program; `env`, `exec`, `npx` and the like are skipped so the program is the one they run.
 */
export function splitCommandLine(line: string): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  const joined = line.replace(/\\\n/g, ' ');
  for (const segment of joined.split(/&&|\|\||[;&|()\n`]|\$\(/)) {
    const all = words(segment.replace(/\s#.*$/, '')).filter((w) => !/^\d*[<>]/.test(w));
    const assignments: Record<string, string> = {};
    let index = 0;
    for (; index < all.length; index += 1) {
      const word = all[index]!;
      if (word === 'export' || PREFIXES.has(word)) continue;
      const assignment = /^([A-Za-z_]\w*)=(.*)$/.exec(word);
      if (assignment === null) break;
      assignments[assignment[1]!] = assignment[2]!;
    }
    const program = all[index];
    if (program === undefined && Object.keys(assignments).length === 0) continue;
    commands.push({ assignments, program, args: all.slice(index + 1) });
  }
  return commands;
}
