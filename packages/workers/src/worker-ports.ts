import type { AgentRunner } from '@allium-loop/agents';
import type { DependencyGraph, Diagnostic, Obligation } from '@allium-loop/allium';

/** One spec file as text, path relative to the project root. */
export interface SpecSource {
  readonly path: string;
  readonly text: string;
}

/** An `open question` declaration the engine found in the spec. */
export interface SpecOpenQuestion {
  readonly text: string;
  readonly file: string;
  readonly line: number;
}

/** What the engine's own reading of the spec says, reduced to what workers need. */
export interface SpecReading {
  /** Every diagnostic; workers treat `severity: 'error'` as "the spec does not parse/check". */
  readonly diagnostics: readonly Diagnostic[];
  readonly openQuestions: readonly SpecOpenQuestion[];
  /**
   * Every construct by id (`rule:Name`, `entity:Name`, `field:Entity.f`, `surface:Name`, …) with a fingerprint
   * that changes when the construct's text does.
   */
  readonly constructs: ReadonlyMap<string, string>;
  readonly graph: DependencyGraph;
  /** The spec's test obligations (`allium plan`: id and construct), when the reader derives them. */
  readonly obligations?: readonly Pick<Obligation, 'id' | 'source_construct'>[];
}

/** Construct ids that appeared, disappeared or changed between two readings. */
export interface ConstructDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

/**
 * Port over the spec package: analyse a spec set and diff two readings. Pure; the adapter over
 * `@allium-loop/allium` (`analyzeSpecs`, `diffInventory`) implements it.
 */
export interface SpecReader {
  read(sources: readonly SpecSource[]): SpecReading;
  diff(before: SpecReading, after: SpecReading): ConstructDiff;
}

/** One test as the engine's runner reported it. */
export interface ObservedTestCase {
  readonly name: string;
  readonly status: 'passed' | 'failed' | 'skipped';
  readonly message?: string;
  /** The case is a test file the runner could not load (always `failed`): red, never "no tests". */
  readonly loadError?: boolean;
}

/** The engine's run of a set of test files. `collected: false` means the runner could not read any result. */
export interface ObservedTestRun {
  readonly collected: boolean;
  readonly exitCode: number | null;
  readonly cases: readonly ObservedTestCase[];
}

/**
 * Port over the verification harness: run only the given test files (paths relative to `cwd`) with the project's
 * test command and report the per-test cases. Implemented over `@allium-loop/verify`'s `runTests`.
 */
export interface TestRunner {
  runFiles(request: { readonly cwd: string; readonly files: readonly string[] }): Promise<ObservedTestRun>;
}

/** Everything a worker needs from the outside world. */
export interface WorkerDeps {
  readonly agent: AgentRunner;
  readonly spec: SpecReader;
  readonly tests: TestRunner;
}
