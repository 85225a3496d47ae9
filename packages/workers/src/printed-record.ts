import { parseJsonObject } from '@allium-loop/agents';
import type { z } from 'zod';
import { RESULT_SCHEMAS } from './result-schemas.js';
import type { WorkerPhase } from './worker-phase.js';

/**
 * A phase record found in an agent's final message: the official Allium agents *return* their record (upstream
 * `driving-the-loop.md` §7, §12) instead of writing the result file. `text` is the record's JSON as the engine
 * writes it to the result file; it is parsed and checked there exactly as a file the agent wrote.
 */
export interface PrintedRecord {
  readonly text: string;
  /** Where it was found: a fenced ```json block, or a bare JSON object in the prose. */
  readonly form: 'fenced' | 'bare';
}

/**
 * The phase's record in an agent's final message, or `undefined` when it printed none. Candidates are the JSON
 * objects of fenced code blocks (```json or plain ```), then the bare top-level JSON objects of the rest of the
 * text. The record is the last candidate that is valid against the phase's schema; when none is, the last
 * candidate that names the phase (`"phase": "<phase>"`) or carries one of the schema's own fields (not only
 * `summary` / `open_questions`), so a malformed record fails as a malformed result file does; a JSON object that
 * is neither (a config excerpt in the prose, another phase's record) is not the record.
 */
export function findPrintedRecord(phase: WorkerPhase, message: string): PrintedRecord | undefined {
  const candidates = jsonCandidates(message);
  const schema = RESULT_SCHEMAS[phase] as z.ZodType;
  const valid = candidates.filter((c) => schema.safeParse(c.value).success);
  const chosen = valid.at(-1) ?? candidates.filter((c) => claimsPhase(phase, c.value)).at(-1);
  return chosen === undefined
    ? undefined
    : { text: `${JSON.stringify(chosen.value, null, 2)}\n`, form: chosen.form };
}

interface Candidate {
  readonly value: Record<string, unknown>;
  readonly form: PrintedRecord['form'];
}

/** Fields every record may carry; sharing only these does not make an object a phase's record. */
const SHARED_FIELDS = new Set(['phase', 'summary', 'open_questions']);

function claimsPhase(phase: WorkerPhase, value: Record<string, unknown>): boolean {
  if ('phase' in value) return value['phase'] === phase;
  const shape = (RESULT_SCHEMAS[phase] as unknown as { shape: Record<string, unknown> }).shape;
  return Object.keys(value).some((key) => !SHARED_FIELDS.has(key) && key in shape);
}

/**
 * The part of a final message searched: its last MiB (the record ends an agent's report; Claude's result line can
 * be far longer), and at most this many characters scanned in all for bare objects, so no message makes the
 * search slow.
 */
const MAX_MESSAGE_CHARS = 1024 * 1024;
const MAX_SCAN_CHARS = 32 * MAX_MESSAGE_CHARS;

function jsonCandidates(message: string): Candidate[] {
  const { blocks, prose } = splitFences(message.slice(-MAX_MESSAGE_CHARS));
  const fenced = blocks.flatMap((block) => {
    const value =
      block.language === '' || block.language === 'json' ? parseJsonObject(block.body) : undefined;
    return value === undefined ? [] : [{ value, form: 'fenced' as const }];
  });
  return [...fenced, ...bareObjects(prose).map((value) => ({ value, form: 'bare' as const }))];
}

/**
 * The fenced code blocks of a Markdown text (``` or ~~~, closed by a line of the same fence) and the prose
 * around them. A fence never closed is prose; once a fence is known unclosed, a later opener of the same fence
 * is not searched again (that keeps the split linear in the text).
 */
function splitFences(text: string): { blocks: { language: string; body: string }[]; prose: string } {
  const lines = text.split('\n');
  const blocks: { language: string; body: string }[] = [];
  const prose: string[] = [];
  const unclosed = new Set<string>();
  for (let i = 0; i < lines.length; i += 1) {
    const opener = /^[ \t]*(`{3,}|~{3,})[ \t]*([\w-]*)/.exec(lines[i]!);
    const fence = opener?.[1];
    const close = fence === undefined || unclosed.has(fence) ? -1 : closingLine(lines, i + 1, fence);
    if (fence !== undefined && close === -1) unclosed.add(fence);
    if (opener === null || close === -1) {
      prose.push(lines[i]!);
      continue;
    }
    blocks.push({ language: opener[2]!.toLowerCase(), body: lines.slice(i + 1, close).join('\n') });
    i = close;
  }
  return { blocks, prose: prose.join('\n') };
}

function closingLine(lines: readonly string[], from: number, fence: string): number {
  for (let j = from; j < lines.length; j += 1) if (lines[j]!.trim() === fence) return j;
  return -1;
}

/** The top-level `{…}` spans of `text` that parse as JSON objects (strings and escapes honoured). */
function bareObjects(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  const budget = { left: MAX_SCAN_CHARS };
  let i = text.indexOf('{');
  while (i !== -1 && budget.left > 0) {
    const end = closingBrace(text, i, budget);
    const value = end === undefined ? undefined : parseJsonObject(text.slice(i, end + 1));
    if (value !== undefined) found.push(value);
    // After an object, look past it; after a brace that opens none, try the next brace.
    i = text.indexOf('{', value !== undefined && end !== undefined ? end + 1 : i + 1);
  }
  return found;
}

function closingBrace(text: string, start: number, budget: { left: number }): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length && budget.left > 0; i += 1) {
    budget.left -= 1;
    const char = text[i];
    if (inString) {
      if (char === '\\') i += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return undefined;
}
