import type { Obligation } from './build-plan.js';

/** A generated test file as the engine observed it, with the obligations propagate says it covers. */
export interface ObligationClaimTest {
  /** Project-relative path of the test file. */
  readonly path: string;
  /**
   * What propagate says the file covers: obligation ids (`rule-success.CloseTally`), or a construct name
   * (`CloseTally`, `Loan.returned_at`) standing for every obligation of that construct.
   */
  readonly covers: readonly string[];
  /** The file exists, the runner collected it and its tests ran (or, unloadable before implementation, were declared). */
  readonly ran: boolean;
  /** The names of the tests that ran (or, for a file the runner could not load, its test declaration lines). */
  readonly titles: readonly string[];
}

/** An uncovered obligation propagate reported, with its upstream classification and reason. */
export interface ReportedUncovered {
  readonly obligation: string;
  readonly classification?: string;
  readonly reason?: string;
}

/** Why a claim did not count. */
export type RejectedClaimReason = 'unknown_obligation' | 'test_not_run' | 'not_named';

/** One claim the engine did not accept. */
export interface RejectedClaim {
  readonly path: string;
  readonly claim: string;
  readonly reason: RejectedClaimReason;
  readonly detail: string;
}

/**
 * The engine's own reconciliation of the spec's obligations with the generated tests: the counts (the shape the
 * witness reads), the upstream line `N obligations, M covered, K uncovered`, which tests cover what, and the
 * claims that did not hold.
 */
export interface ObligationReconciliation {
  readonly obligations: number;
  readonly covered: number;
  /** Each uncovered obligation, with the classification propagate reported for it (absent: none given). */
  readonly uncovered: readonly { readonly id: string; readonly reason?: string }[];
  /** Covered obligation id → the test files whose claim was proven. */
  readonly coveredBy: ReadonlyMap<string, readonly string[]>;
  readonly rejected: readonly RejectedClaim[];
  readonly line: string;
}

/** Lower-case letters and digits only: `rule-success.CloseTally` and `test_close_tally` compare on their words. */
const squash = (text: string): string => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/**
 * Checks propagate's coverage claims against the spec's test plan and computes the reconciliation itself. An
 * obligation counts as covered when some test file claims it (by id, or by its construct's name), that file ran,
 * and one of the file's test names contains the obligation's id or its construct (compared on letters and digits,
 * ignoring case). A claim naming neither an obligation id nor a construct of the plan, a claim by a file that did
 * not run, and a claim no test name backs are rejected, each with the reason. Uncovered obligations carry the
 * classification propagate reported for them, if any. Obligations are counted once per id. Pure.
 */
export function checkObligationClaims(
  plan: { readonly obligations: readonly Pick<Obligation, 'id' | 'source_construct'>[] },
  tests: readonly ObligationClaimTest[],
  reported: readonly ReportedUncovered[] = [],
): ObligationReconciliation {
  const byId = new Map<string, Pick<Obligation, 'id' | 'source_construct'>>();
  const byConstruct = new Map<string, string[]>();
  for (const o of plan.obligations) {
    if (byId.has(o.id)) continue;
    byId.set(o.id, o);
    byConstruct.set(o.source_construct, [...(byConstruct.get(o.source_construct) ?? []), o.id]);
  }
  const coveredBy = new Map<string, string[]>();
  const rejected: RejectedClaim[] = [];
  for (const test of tests) {
    const titles = test.titles.map(squash);
    for (const claim of new Set(test.covers)) {
      const ids = byId.has(claim) ? [claim] : (byConstruct.get(claim) ?? []);
      if (ids.length === 0) {
        const detail = `${test.path} claims ${claim}, which is neither an obligation id nor a construct of the spec's plan`;
        rejected.push({ path: test.path, claim, reason: 'unknown_obligation', detail });
        continue;
      }
      if (!test.ran) {
        const detail = `${test.path} claims ${claim} but its tests were not collected and run`;
        rejected.push({ path: test.path, claim, reason: 'test_not_run', detail });
        continue;
      }
      const proven = ids.filter((id) => {
        const o = byId.get(id);
        const names = [squash(id), squash(o?.source_construct ?? '')].filter((n) => n !== '');
        return titles.some((title) => names.some((name) => title.includes(name)));
      });
      if (proven.length === 0) {
        const detail = `${test.path} claims ${claim} but no test name there names it or its construct`;
        rejected.push({ path: test.path, claim, reason: 'not_named', detail });
        continue;
      }
      for (const id of proven) coveredBy.set(id, [...(coveredBy.get(id) ?? []), test.path]);
    }
  }
  const reasons = new Map(reported.map((r) => [r.obligation, r.classification ?? r.reason]));
  const uncovered = [...byId.keys()]
    .filter((id) => !coveredBy.has(id))
    .map((id) => {
      const reason = reasons.get(id);
      return reason === undefined ? { id } : { id, reason };
    });
  const total = byId.size;
  const covered = coveredBy.size;
  return {
    obligations: total,
    covered,
    uncovered,
    coveredBy,
    rejected,
    line: `${total} obligations, ${covered} covered, ${uncovered.length} uncovered`,
  };
}
