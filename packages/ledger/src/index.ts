/**
 * @allium-loop/ledger — the system of record for a run: the zod schema of `.allium-loop/<slug>.json`, the
 * `LedgerStore` port with its file and memory adapters (atomic writes, lease with fencing, event journal),
 * intent records, slugs, redaction and `.gitignore` mechanics. Fakes and the conformance suite live in
 * `@allium-loop/ledger/testing`.
 */
export { createLedger, DEFAULT_CAPS, type NewLedgerInput } from './create-ledger.js';
export {
  createFileLedgerStore,
  runFiles,
  type FileLedgerStoreOptions,
  type RunFiles,
} from './file-ledger-store.js';
export {
  beginIntent,
  endIntent,
  pendingIntents,
  type BegunIntent,
  type IntentEnd,
  type IntentInput,
} from './intents.js';
export {
  ExtensionJournalEventSchema,
  JournalEventSchema,
  KnownJournalEventSchema,
  SYNC_EVENT_TYPES,
  type JournalEvent,
  type JournalEventType,
} from './journal-event-schema.js';
export {
  DEFAULT_STALE_AFTER_MS,
  isPidAliveOnThisHost,
  LeaseRecordSchema,
  judgeStaleness,
  systemLeaseEnvironment,
  type LeaseEnvironment,
} from './lease.js';
export {
  LeaseHeldError,
  LeaseLostError,
  LedgerCorruptError,
  LedgerError,
  LedgerInvalidError,
  type LeaseHolder,
} from './ledger-errors.js';
export {
  CapsSchema,
  CheckpointSchema,
  EntrySchema,
  HistoryEntrySchema,
  InnerLoopSchema,
  IntentOutcomeSchema,
  IntentSchema,
  LEDGER_SCHEMA_VERSION,
  LedgerSchema,
  LedgerObjectSchema,
  ProtectedTestSchema,
  QuestionSchema,
  RunModeSchema,
  SlugSchema,
  SpentSchema,
  SubGoalSchema,
  TerminalSchema,
  TerminalStateSchema,
  type Caps,
  type Checkpoint,
  type Entry,
  type HistoryEntry,
  type InnerLoop,
  type Intent,
  type IntentOutcome,
  type Ledger,
  type ProtectedTest,
  type Question,
  type RunMode,
  type Spent,
  type SubGoal,
  type Terminal,
  type TerminalState,
} from './ledger-schema.js';
export type {
  AcquiredLease,
  AppendOptions,
  JournalRead,
  Lease,
  LeaseRecord,
  LedgerLoadFailure,
  LedgerStore,
  SaveOutcome,
  TakeoverReason,
} from './ledger-store.js';
export {
  createMemoryLedgerBackend,
  createMemoryLedgerStore,
  type MemoryLedgerBackend,
  type MemoryLedgerStore,
  type MemoryLedgerStoreOptions,
} from './memory-ledger-store.js';
export {
  decodeLedger,
  LEDGER_MIGRATIONS,
  type DecodedLedger,
  type LedgerMigration,
} from './migrate-ledger.js';
export {
  ensureGitIgnored,
  GITIGNORE_ENTRY,
  type EnsureGitIgnoredOptions,
  type GitIgnoreOutcome,
} from './ensure-git-ignored.js';
export { writeFileAtomic } from './atomic-write.js';
export { LEDGER_JSON_SCHEMA_PATH, renderLedgerJsonSchema } from './ledger-json-schema.js';
export {
  LoopStateSchema,
  ModeSpecSchema,
  PortFailureSchema,
  SpecLoopStateSchema,
  SpecRunConfigSchema,
  StateFileModeStateSchema,
  StoryModeStateSchema,
  VerifyModeStateSchema,
  type LoopStateRecord,
  type ModeSpec,
  type PortFailure,
  type SpecLoopState,
  type SpecRunConfig,
  type StateFileModeConfig,
  type StateFileModeState,
  type StoryModeConfig,
  type StoryModeState,
  type VerifyModeConfig,
  type VerifyModeState,
} from './loop-state-schema.js';
export { formatIssuePath, formatIssues, parseLedger } from './parse-ledger.js';
export { createRedactor, isSecretEnvName, REDACTED, type Redactor } from './redact.js';
export { baseSlug, chooseSlug, normalizeGoal, type SlugChoice, type SlugOccupant } from './slug.js';
export {
  DivergenceKindSchema,
  DivergenceSchema,
  GitStateSchema,
  StructuralVerdictSchema,
  TestsVerdictSchema,
  TickVerdictSchema,
  WeedVerdictSchema,
  type Divergence,
  type GitState,
  type StructuralVerdict,
  type TestsVerdict,
  type TickVerdict,
  type WeedVerdict,
} from './verdict-schema.js';
export { StoredLedgerSchema, fromStoredLedger, toStoredLedger, type StoredLedger } from './stored-ledger.js';
export {
  ENGINE_LEDGER_KEYS,
  UPSTREAM_ADOPTED,
  UpstreamLedgerSchema,
  readUpstreamLedger,
  upstreamTestHash,
  type UpstreamLedger,
  type UpstreamReading,
} from './upstream-ledger.js';
