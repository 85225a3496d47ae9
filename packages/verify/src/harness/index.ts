export { applyHarnessRestore, checkHarness, type HarnessCheck } from './check-harness.js';
export { splitCommandLine, type SimpleCommand } from './command-words.js';
export {
  fingerprintHarness,
  readHarnessFiles,
  type FingerprintHarnessOptions,
} from './fingerprint-harness.js';
export {
  changedHarness,
  describeHarnessChange,
  HarnessRecordSchema,
  partHash,
  partText,
  planHarnessRestore,
  type HarnessEntry,
  type HarnessPart,
  type HarnessRecord,
} from './harness-record.js';
export {
  harnessStoreDir,
  latestHarnessRecord,
  loadHarnessRecord,
  parseHarnessRecord,
  saveHarnessRecord,
  type StoredHarnessRecord,
} from './harness-store.js';
