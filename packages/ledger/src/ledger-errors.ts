import { AlliumLoopError } from '@allium-loop/errors';

/** Base of the ledger package's errors; `code` is always `ledger.<reason>`. */
export class LedgerError extends AlliumLoopError {}

/** Who holds a lease, as read from the lock file. */
export interface LeaseHolder {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
  readonly heartbeatAt: string;
}

/**
 * Another supervisor holds the lease of this run (`ledger.lease_held`, retryable: it may end or go stale).
 * The message names its pid, host and start time.
 */
export class LeaseHeldError extends LedgerError {
  /** The current holder. */
  readonly holder: LeaseHolder;

  constructor(slug: string, lockFile: string, holder: LeaseHolder) {
    super(
      `Run "${slug}" is already driven by pid ${holder.pid} on ${holder.host} (started ${holder.startedAt}, last heartbeat ${holder.heartbeatAt}).`,
      {
        code: 'ledger.lease_held',
        retryable: true,
        context: { slug, lockFile, holder },
        hint: `Wait for it to finish or stop it. If that process is gone, ${lockFile} is taken over once its heartbeat is stale.`,
      },
    );
    this.holder = holder;
  }
}

/**
 * The caller's lease no longer owns the lock (`ledger.lease_lost`): another process took it over, or it was
 * released. Writes with that lease are refused (fencing); the caller must stop driving the run.
 */
export class LeaseLostError extends LedgerError {
  constructor(slug: string, lockFile: string, detail: string) {
    super(`Lost the lease of run "${slug}": ${detail}. Nothing was written.`, {
      code: 'ledger.lease_lost',
      context: { slug, lockFile },
      hint: 'Another allium-loop process now drives this run; check `allium-loop status` before resuming.',
    });
  }
}

/**
 * A stored ledger cannot be read or fails its schema (`ledger.corrupt`). The file is left untouched; a copy is
 * kept at `backup` and no save to that slug succeeds until the user repairs or removes the file.
 */
export class LedgerCorruptError extends LedgerError {
  /** The ledger file. */
  readonly file: string;
  /** The first problems found. */
  readonly issues: readonly string[];
  /** Where a copy of the bad file was kept, when one could be made. */
  readonly backup: string | undefined;

  constructor(file: string, issues: readonly string[], backup: string | undefined) {
    const shown = issues.slice(0, 5);
    const more = issues.length > shown.length ? `\n  … and ${issues.length - shown.length} more` : '';
    super(`The ledger ${file} is corrupt and was not modified:\n  ${shown.join('\n  ')}${more}`, {
      code: 'ledger.corrupt',
      context: { file, issues: shown, backup },
      hint:
        (backup === undefined ? '' : `A copy was kept at ${backup}. `) +
        `Fix the file by hand (see docs/ledger.md), or move it aside to start the goal afresh; allium-loop will not overwrite it.`,
    });
    this.file = file;
    this.issues = issues;
    this.backup = backup;
  }
}

/** A ledger or event handed to the store does not satisfy the schema (`ledger.invalid`): a bug in the caller. */
export class LedgerInvalidError extends LedgerError {
  /** What is wrong. */
  readonly issues: readonly string[];

  constructor(what: string, issues: readonly string[]) {
    super(`Refusing to write an invalid ${what}: ${issues.slice(0, 5).join('; ')}`, {
      code: 'ledger.invalid',
      context: { issues: issues.slice(0, 5) },
    });
    this.issues = issues;
  }
}
