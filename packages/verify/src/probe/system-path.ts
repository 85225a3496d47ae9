import { readdirSync } from 'node:fs';

/** What Node puts for bytes of a file name that are not UTF-8 when it hands the name over as a string. */
const REPLACEMENT = '\uFFFD';

/**
 * The path the file system knows for `path`, a path whose names Node may have handed over as strings: a name that is
 * not UTF-8 (`caf\xff.allium`, legal on Linux) arrives with U+FFFD in place of its stray bytes, and that string names
 * no file. Each such name is looked up among its folder's names as bytes, and the path comes back as bytes, which
 * every `fs` call takes. `path` itself when it holds no U+FFFD (almost always, and then nothing is read); undefined when
 * a folder on the way cannot be read, or when no name or more than one name of a folder reads as the one given (two
 * names that differ only in their stray bytes cannot be told apart from the string).
 */
export function systemPath(path: string): string | Buffer | undefined {
  if (!path.includes(REPLACEMENT)) return path;
  // The path so far as bytes: undefined before its first name, empty after the root of an absolute path.
  let bytes: Buffer | undefined;
  for (const name of path.split('/')) {
    let found: Buffer = Buffer.from(name);
    if (name.includes(REPLACEMENT)) {
      const folder = bytes === undefined ? DOT : bytes.length === 0 ? SLASH : bytes;
      let listed: Buffer[];
      try {
        listed = readdirSync(folder, { encoding: 'buffer' });
      } catch {
        return undefined;
      }
      const matches = listed.filter((entry) => entry.toString('utf8') === name);
      if (matches.length !== 1) return undefined;
      found = matches[0] as Buffer;
    }
    bytes = bytes === undefined ? found : Buffer.concat([bytes, SLASH, found]);
  }
  return bytes;
}

const SLASH = Buffer.from('/');
const DOT = Buffer.from('.');
