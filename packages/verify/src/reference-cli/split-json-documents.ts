/** The documents found in a stream of concatenated JSON texts, and whatever could not be read. */
export interface SplitJsonResult {
  readonly documents: readonly unknown[];
  /** Text that is not part of a complete, valid document (a truncated tail, stray output); empty when none. */
  readonly unparsed: string;
}

/**
 * Splits concatenated JSON documents (`{…}{…}` or pretty-printed one after another, as `allium check` prints one
 * object per file) in a single pass: it tracks nesting depth, strings and escapes, and parses each top-level
 * object or array as soon as it closes. Text between documents that is not whitespace, a document that fails to
 * parse, and an unterminated tail are returned in `unparsed`. Never throws.
 */
export function splitJsonDocuments(text: string): SplitJsonResult {
  const documents: unknown[] = [];
  const unparsed: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  let gapStart = 0;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (char === '\\') escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"' && depth > 0) inString = true;
    else if (char === '{' || char === '[') {
      if (depth === 0) {
        unparsed.push(text.slice(gapStart, index));
        start = index;
      }
      depth += 1;
    } else if ((char === '}' || char === ']') && depth > 0) {
      depth -= 1;
      if (depth === 0) {
        collect(text.slice(start, index + 1), documents, unparsed);
        gapStart = index + 1;
      }
    }
  }
  unparsed.push(depth > 0 ? text.slice(start) : text.slice(gapStart));
  return {
    documents,
    unparsed: unparsed
      .map((part) => part.trim())
      .filter((part) => part !== '')
      .join('\n'),
  };
}

function collect(candidate: string, documents: unknown[], unparsed: string[]): void {
  try {
    documents.push(JSON.parse(candidate));
  } catch {
    unparsed.push(candidate);
  }
}
