import type { SourceLocation } from '@allium-loop/allium';

/** An `open question "…"` declaration found in a spec by the parser. */
export interface OpenQuestion {
  readonly text: string;
  readonly location: SourceLocation;
}

/**
 * Collects every `open question` node of parsed specs — top-level ones and those nested in blocks — by walking
 * the syntax tree. Suppressions do not hide them: an `-- allium-ignore` silences a diagnostic, not a question.
 */
export function collectOpenQuestions(trees: readonly unknown[]): OpenQuestion[] {
  const found: OpenQuestion[] = [];
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const record = node as Record<string, unknown>;
    if (record['kind'] === 'open-question' && typeof record['text'] === 'string') {
      found.push({ text: record['text'], location: record['location'] as SourceLocation });
      return;
    }
    for (const value of Object.values(record)) visit(value);
  };
  for (const tree of trees) visit(tree);
  return found;
}

/** Open questions split by classification. */
export interface ClassifiedQuestions {
  readonly blocking: readonly OpenQuestion[];
  readonly parked: readonly OpenQuestion[];
}

/**
 * Splits the spec's open questions: those whose text the ledger records as parked are parked; every other one
 * counts as blocking, because nobody has decided that the next unit of work can go on without its answer.
 */
export function classifyOpenQuestions(
  questions: readonly OpenQuestion[],
  parkedTexts: ReadonlySet<string>,
): ClassifiedQuestions {
  const normalise = (text: string) => text.trim().replace(/\s+/g, ' ');
  const parked = new Set([...parkedTexts].map(normalise));
  return {
    blocking: questions.filter((question) => !parked.has(normalise(question.text))),
    parked: questions.filter((question) => parked.has(normalise(question.text))),
  };
}
