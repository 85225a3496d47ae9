import { err, ok, type Result } from '@allium-loop/errors';
import { JournalEventSchema, type JournalEvent } from './journal-event-schema.js';
import { LedgerInvalidError } from './ledger-errors.js';
import { SlugSchema, type Ledger } from './ledger-schema.js';
import { StoredLedgerSchema, toStoredLedger } from './stored-ledger.js';
import type { JournalRead } from './ledger-store.js';
import { decodeLedger, type DecodedLedger } from './migrate-ledger.js';
import { formatIssues } from './parse-ledger.js';
import type { Redactor } from './redact.js';
import { readUpstreamLedger, type UpstreamLedger } from './upstream-ledger.js';

/**
 * Turns a ledger into the exact text stored: its upstream top level (`stored-ledger.ts`), redacted, validated
 * (schema key order, free-form records with sorted keys), two-space JSON and a final newline. Throws `LedgerInvalidError` when it fails the schema.
 */
export function serializeLedger(ledger: Ledger, redactor: Redactor): string {
  const parsed = StoredLedgerSchema.safeParse(redactor.value(toStoredLedger(ledger)));
  if (!parsed.success) throw new LedgerInvalidError('ledger', formatIssues(parsed.error.issues));
  return `${JSON.stringify(parsed.data, null, 2)}\n`;
}

/**
 * Why stored ledger text could not be decoded. `upstream_ledger`: the file was written by the upstream `/allium`
 * skill (no allium-loop keys, valid against the upstream schema); `upstream` holds it, for a run to adopt.
 */
export interface LedgerDecodeFailure {
  readonly reason: 'invalid_json' | 'schema_invalid' | 'upstream_ledger';
  readonly issues: readonly string[];
  readonly upstream?: UpstreamLedger;
}

/** The issue lines of an upstream ledger met where an allium-loop ledger was expected. */
function upstreamIssues(ledger: UpstreamLedger): string[] {
  return [
    `written by the upstream /allium skill (goal "${ledger.goal}", ${ledger.mode}, tick ${String(ledger.tick)}), not by allium-loop: \`allium-loop resume <slug>\` or \`allium-loop run "<goal>"\` adopts it`,
  ];
}

/** Decodes stored ledger text: JSON, then migration and validation. Never throws. */
export function decodeLedgerText(text: string): Result<DecodedLedger, LedgerDecodeFailure> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    return err({ reason: 'invalid_json', issues: [cause instanceof Error ? cause.message : String(cause)] });
  }
  const foreign = readUpstreamLedger(json);
  if (foreign.kind === 'upstream')
    return err({
      reason: 'upstream_ledger',
      issues: upstreamIssues(foreign.ledger),
      upstream: foreign.ledger,
    });
  if (foreign.kind === 'invalid') {
    const head = 'no allium-loop keys, and not a valid upstream Allium ledger (ledger.schema.json):';
    return err({ reason: 'schema_invalid', issues: [head, ...foreign.issues] });
  }
  const decoded = decodeLedger(json);
  return decoded.ok ? decoded : err({ reason: 'schema_invalid', issues: decoded.issues });
}

/** Turns events into journal lines (each ending in `\n`), redacted and validated. Throws `LedgerInvalidError`. */
export function serializeEvents(events: readonly JournalEvent[], redactor: Redactor): string {
  return events
    .map((event) => {
      const parsed = JournalEventSchema.safeParse(redactor.value(event));
      if (!parsed.success)
        throw new LedgerInvalidError(`journal event "${event.type}"`, formatIssues(parsed.error.issues));
      return `${JSON.stringify(parsed.data)}\n`;
    })
    .join('');
}

function parseLine(line: string): Result<JournalEvent, readonly string[]> {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (cause) {
    return err([cause instanceof Error ? cause.message : String(cause)]);
  }
  const parsed = JournalEventSchema.safeParse(json);
  return parsed.success ? ok(parsed.data) : err(formatIssues(parsed.error.issues));
}

/**
 * Parses journal text. An unterminated last line that does not parse is a torn tail (a crash mid-append) and is
 * ignored; complete lines that fail are listed in `invalidLines` and skipped; every other event is kept.
 */
export function parseJournalText(text: string): JournalRead {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  const events: JournalEvent[] = [];
  const invalidLines: { line: number; issues: readonly string[] }[] = [];
  lines.forEach((line, index) => {
    if (line.trim().length === 0) return;
    const parsed = parseLine(line);
    if (parsed.ok) events.push(parsed.value);
    else invalidLines.push({ line: index + 1, issues: parsed.issues });
  });
  let tornTail = false;
  if (last.trim().length > 0) {
    const parsed = parseLine(last);
    if (parsed.ok) events.push(parsed.value);
    else tornTail = true;
  }
  return { events, tornTail, invalidLines };
}

/** The text to write before appending to a journal whose current content ends with `lastChar`. */
export function journalSeparator(lastChar: string | undefined): string {
  return lastChar === undefined || lastChar === '\n' ? '' : '\n';
}

/** Throws `LedgerInvalidError` unless `slug` is a valid slug (it names files, so it must not be a path). */
export function assertSlug(slug: string): void {
  const parsed = SlugSchema.safeParse(slug);
  if (!parsed.success) {
    throw new LedgerInvalidError('slug', [`slug "${slug}": ${parsed.error.issues[0]?.message ?? 'invalid'}`]);
  }
}
