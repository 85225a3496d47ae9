import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Where the recorded output of the real CLIs lives (`tools/fake-agents/recordings/`). */
export const RECORDINGS_DIR = fileURLToPath(new URL('../../../tools/fake-agents/recordings/', import.meta.url));

/** The recordings kept, by file name: what was run to make each one. */
export const RECORDINGS = {
  'claude-stream-json.jsonl': 'claude -p --output-format stream-json --verbose (a Write tool call, then text)',
  'claude-json.jsonl': 'claude -p --output-format json (a Write tool call, then text)',
  'codex-json.jsonl': 'codex exec --json (an apply_patch call, a shell call, then text)',
} as const;

/** The name of a recording. */
export type RecordingName = keyof typeof RECORDINGS;

/** The JSON lines of a recording. */
export function readRecording(name: RecordingName): Record<string, unknown>[] {
  return parseJsonLines(readFileSync(`${RECORDINGS_DIR}${name}`, 'utf8'));
}

/** The JSON object lines of a CLI's stdout (other lines are skipped). */
export function parseJsonLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a JSON line
    }
  }
  return out;
}

/** What kind of event a line is: `type`, plus `subtype` (Claude) or `item.type` (Codex) when present. */
export function eventKind(event: Record<string, unknown>): string {
  const item = event['item'];
  const itemType =
    typeof item === 'object' && item !== null ? (item as Record<string, unknown>)['type'] : undefined;
  return [event['type'], event['subtype'], itemType].filter((p) => typeof p === 'string').join('/');
}

/** Every key path of a JSON value with the JSON type found there (`usage.input_tokens: number`). */
export function keyPaths(value: unknown, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (v: unknown, path: string): void => {
    if (Array.isArray(v)) {
      out.set(path, 'array');
      for (const element of v) visit(element, `${path}[]`);
      return;
    }
    if (v === null) {
      out.set(path, 'null');
      return;
    }
    if (typeof v === 'object') {
      out.set(path, 'object');
      for (const [key, child] of Object.entries(v as Record<string, unknown>))
        visit(child, path === '' ? key : `${path}.${key}`);
      return;
    }
    out.set(path, typeof v);
  };
  visit(value, prefix);
  out.delete('');
  return out;
}

/**
 * Where `fake` output differs from the `real` recording: for each kind of event both print, every key path the
 * fake prints must exist in the real event with the same JSON type (a `null` in either is accepted, as real
 * CLIs print `null` for fields they sometimes fill); `required` kinds must appear in both. Returns one line
 * per difference; empty means no drift.
 */
export function shapeDrift(
  fake: readonly Record<string, unknown>[],
  real: readonly Record<string, unknown>[],
  required: readonly string[],
): string[] {
  const problems: string[] = [];
  const byKind = (events: readonly Record<string, unknown>[]) => {
    const map = new Map<string, Map<string, Set<string>>>();
    for (const event of events) {
      const kind = eventKind(event);
      const paths = map.get(kind) ?? new Map<string, Set<string>>();
      for (const [path, type] of keyPaths(event)) paths.set(path, (paths.get(path) ?? new Set()).add(type));
      map.set(kind, paths);
    }
    return map;
  };
  const fakeKinds = byKind(fake);
  const realKinds = byKind(real);
  for (const kind of required) {
    if (!fakeKinds.has(kind)) problems.push(`the fake prints no ${kind} event`);
    if (!realKinds.has(kind)) problems.push(`the real CLI printed no ${kind} event`);
  }
  for (const [kind, fakePaths] of fakeKinds) {
    const realPaths = realKinds.get(kind);
    if (realPaths === undefined) continue;
    for (const [path, types] of fakePaths) {
      const realTypes = realPaths.get(path);
      if (realTypes === undefined) {
        problems.push(`${kind}: the fake prints ${path}, the real CLI does not`);
        continue;
      }
      for (const type of types)
        if (type !== 'null' && !realTypes.has(type) && !realTypes.has('null'))
          problems.push(`${kind}: ${path} is ${type} in the fake, ${[...realTypes].join('|')} in the real CLI`);
    }
  }
  return problems;
}
