import { z } from 'zod';
import { JsonRecordSchema } from './json-value.js';
import { QuestionSchema, RunModeSchema, TerminalStateSchema } from './ledger-schema.js';
import { PortFailureSchema } from './loop-state-schema.js';
import { TickVerdictSchema } from './verdict-schema.js';

/** Fields every journal event carries. */
const base = {
  at: z.iso.datetime(),
  /** The tick the event belongs to, when it belongs to one. */
  tick: z.number().int().nonnegative().optional(),
};

const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), ...base, ...shape });

const Holder = z.object({
  pid: z.number().int(),
  host: z.string(),
  startedAt: z.string(),
  heartbeatAt: z.string(),
});

/** The events the engine itself writes. */
export const KnownJournalEventSchema = z.discriminatedUnion('type', [
  event('run_started', {
    goal: z.string(),
    mode: RunModeSchema,
    resumed: z.boolean(),
    pid: z.number().int(),
    host: z.string(),
  }),
  event('phase_started', { phase: z.string() }),
  event('phase_ended', {
    phase: z.string(),
    outcome: z.enum(['ok', 'failed', 'skipped']),
    durationMs: z.number().nonnegative(),
    detail: z.string().optional(),
  }),
  event('verdict', { verdict: TickVerdictSchema }),
  event('tick_recorded', { line: z.string(), usd: z.number().nullable().optional() }),
  event('cap_reached', { cap: z.string(), limit: z.number(), value: z.number() }),
  event('question_raised', { question: QuestionSchema }),
  event('question_answered', { id: z.string(), answer: z.string() }),
  event('violation', {
    kind: z.string(),
    path: z.string().optional(),
    detail: z.string(),
    reverted: z.boolean(),
  }),
  event('lease_taken_over', { previous: Holder, reason: z.enum(['dead_pid', 'stale_heartbeat']) }),
  event('intent_begun', { key: z.string(), phase: z.string(), action: z.string() }),
  event('intent_ended', {
    key: z.string(),
    status: z.enum(['succeeded', 'failed', 'abandoned']),
    detail: z.string().optional(),
  }),
  event('terminal', {
    state: TerminalStateSchema,
    reason: z.string(),
    detail: z.string(),
    error: PortFailureSchema.optional(),
  }),
  event('note', { message: z.string(), data: JsonRecordSchema.optional() }),
]);

/**
 * An event type added later or by a mode, without changing this schema: its name starts with `x-`
 * (`x-stories.verdict`) and its payload sits in `data`.
 */
export const ExtensionJournalEventSchema = z.object({
  type: z.templateLiteral(['x-', z.string().regex(/^[a-z0-9_.-]+$/)]),
  ...base,
  data: JsonRecordSchema,
});

/** One line of `.allium-loop/<slug>.events.ndjson`. */
export const JournalEventSchema = z.union([KnownJournalEventSchema, ExtensionJournalEventSchema]);

/** One journal event. */
export type JournalEvent = z.infer<typeof JournalEventSchema>;
/** The name of an event type, known or extension. */
export type JournalEventType = JournalEvent['type'];

/** Event types that mark a phase boundary: the journal is fsynced after appending one of them. */
export const SYNC_EVENT_TYPES: ReadonlySet<string> = new Set([
  'run_started',
  'phase_started',
  'phase_ended',
  'verdict',
  'tick_recorded',
  'cap_reached',
  'question_raised',
  'lease_taken_over',
  'intent_begun',
  'intent_ended',
  'terminal',
]);
