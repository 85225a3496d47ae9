/**
 * Compiles a glob over `/`-separated relative paths to a regular expression: `**` spans any number of directories
 * (`**\/` may match none), `*` any run of characters within one segment, `?` one character, `{a,b}` either
 * alternative; everything else is literal. A pattern without a `/` matches the file name at any depth, as
 * `.gitignore` patterns do.
 */
export function globToRegExp(glob: string): RegExp {
  const pattern = glob.includes('/') ? glob.replace(/^\.\//, '') : `**/${glob}`;
  let source = '';
  for (let at = 0; at < pattern.length; at += 1) {
    const char = pattern[at]!;
    if (pattern.startsWith('**/', at)) {
      source += '(?:[^/]*/)*';
      at += 2;
    } else if (pattern.startsWith('**', at)) {
      source += '.*';
      at += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '{') source += '(?:';
    else if (char === '}') source += ')';
    else if (char === ',' && openBraces(pattern, at)) source += '|';
    else source += char.replace(/[.+^$()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

function openBraces(pattern: string, at: number): boolean {
  const before = pattern.slice(0, at);
  return before.split('{').length > before.split('}').length;
}
