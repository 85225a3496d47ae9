import type { DependencyGraph } from '@allium-loop/allium';
import type { LoopMode, PhaseContext, PreviousVerdict } from './phase-context.js';
import { loadTemplate, renderTemplate } from './render-template.js';
import { loopRecordPath, resultFilePath } from './result-file-path.js';
import { renderLoopRecordJsonSchema, renderResultJsonSchema } from './result-schemas.js';
import { selectSliceExcerpt, type SpecExcerpt } from './select-slice-excerpt.js';
import type { SpecSource } from './worker-ports.js';
import type { WorkerPhase } from './worker-phase.js';

/** The spec as the engine read it before the phase: the text to quote and the graph to slice by. */
export interface PromptSpec {
  readonly sources: readonly SpecSource[];
  readonly graph: DependencyGraph;
}

/** A rendered prompt and what it quotes. */
export interface AssembledPrompt {
  readonly prompt: string;
  readonly resultFile: string;
  readonly excerpt: SpecExcerpt;
}

const SPEC_QUESTIONS =
  '`open_questions`: the text of every `open question` now in the spec, exactly as written there; the engine ' +
  'reads the spec and compares.';

const RESULT_NOTES: Record<WorkerPhase, string> = {
  elicit: `It has the shape of the upstream distill record, with \`phase\` \`"elicit"\`. \`spec_path\`: the spec file you wrote. ${SPEC_QUESTIONS}\n`,
  tend: `This is the upstream Allium tend record. \`spec_path\`: the spec file you edited; \`changes\`: one line per edit. ${SPEC_QUESTIONS}\n`,
  distill:
    `This is the upstream Allium distill record. \`spec_path\`: the spec file you wrote. ${SPEC_QUESTIONS} The engine ` +
    'diffs the spec to count what is new; say in `summary` when you found nothing.\n',
  propagate:
    'This is the upstream Allium propagate record. `generated_tests`: every test file you created or changed, each ' +
    'with `sha256:` and the hex SHA-256 of its content as you leave it (e.g. `sha256sum <file>`); the engine rehashes ' +
    'each file and runs each alone. `obligations` and `summary` carry your reconciliation (`N obligations, M covered, ' +
    "K uncovered`) of the spec's test obligations (`allium plan`, or `allium-loop spec plan <spec> --json`); every " +
    'obligation you did not cover goes in `uncovered_obligations` with its classification and reason. The engine ' +
    'recomputes the reconciliation itself, and uncovered obligations block convergence.\n',
  implement:
    '`files_changed`: the code files you changed. `contested_tests`: tests you believe contradict the spec, each ' +
    'with your reason (an empty list when there are none).\n',
  weed:
    'This is the upstream Allium weed record. `verdict` is `clean` exactly when `divergences` is empty; `spec` and ' +
    '`code` say what each side says or does, with `file:line` where known.\n',
};

const QUESTION_NOTE =
  '`open_questions`: for each question in your result, its classification: `blocking` (with `why`: the next unit ' +
  'of work cannot proceed without the answer) or `parked` (with the `assumption` you worked under). A question you ' +
  'do not classify is parked.';

const LOOP_NOTES: Record<WorkerPhase, string | undefined> = {
  elicit: QUESTION_NOTE,
  tend: QUESTION_NOTE,
  distill: QUESTION_NOTE,
  weed: undefined,
  implement: undefined,
  propagate:
    '`covers`: for each generated test file, the obligation ids (or construct names, standing for all their ' +
    'obligations) it covers. Each must appear in the title of a test in that file; the engine runs the file and ' +
    'checks. Without `covers` the engine counts what the test titles name.',
};

function renderLoopRecord(phase: WorkerPhase, resultFile: string): string {
  const note = LOOP_NOTES[phase];
  if (note === undefined) return '';
  return [
    `Beside it, write the engine's own record to \`${loopRecordPath(resultFile)}\` (the same way): what the engine`,
    'needs that the record above has no field for. It must match this JSON Schema:',
    '',
    '```json',
    renderLoopRecordJsonSchema(),
    '```',
    '',
    note,
    '',
  ].join('\n');
}

const MODE_ADVICE: Record<LoopMode, string> = {
  'spec-first':
    'The code for this behaviour does not exist yet, so the new tests should fail when you run them. A new test ' +
    'that already passes either repeats what existing code does or asserts nothing; the engine checks each one.',
  'code-first':
    'The code already exists, so the new tests should pass against it. A failing test points at a disagreement ' +
    'between spec and code: keep the test as the spec says and mention it in your summary; do not bend it to the code.',
};

function bulletList(items: readonly string[], empty: string): string {
  return items.length === 0 ? empty : items.map((item) => `- ${item}`).join('\n');
}

function renderPaths(context: PhaseContext): string {
  const { spec, tests, code } = context.paths;
  return [
    `Spec files:\n${bulletList(
      spec.map((p) => `\`${p}\``),
      '- (none yet)',
    )}`,
    `Tests:\n${bulletList(
      tests.map((p) => `\`${p}\``),
      '- (none yet)',
    )}`,
    `Code:\n${bulletList(
      code.map((p) => `\`${p}\``),
      '- (none yet)',
    )}`,
  ].join('\n\n');
}

function renderVerdict(verdict: PreviousVerdict | undefined): string {
  if (verdict === undefined) return '## Previous verdict\n\nNone: this is the first pass.';
  const failing = verdict.failingTests.map((t) =>
    t.message === undefined ? t.name : `${t.name} — ${t.message}`,
  );
  const divergences = verdict.divergences.map(
    (d) => `${d.construct} (${d.classification}): ${d.description}`,
  );
  const structural = verdict.structuralErrors.map((e) => `${e.file}:${e.line} ${e.message}`);
  return [
    '## Previous verdict (measured by the engine)',
    `Failing tests:\n${bulletList(failing, '- none')}`,
    `Divergences between spec and code:\n${bulletList(divergences, '- none')}`,
    `Structural errors in the spec:\n${bulletList(structural, '- none')}`,
    ...(verdict.notes === undefined || verdict.notes.length === 0
      ? []
      : [`Sent back by the engine:\n${bulletList(verdict.notes, '')}`]),
  ].join('\n\n');
}

function renderQuestions(context: PhaseContext): string {
  if (context.parkedQuestions.length === 0) return '## Parked open questions\n\nNone.';
  const lines = context.parkedQuestions.map((q) => `"${q.text}" — assumed: ${q.assumption}`);
  return `## Parked open questions\n\nThese stay open; keep working under the stated assumption.\n\n${bulletList(lines, '')}`;
}

function renderSlice(context: PhaseContext, excerpt: SpecExcerpt): string {
  if (excerpt.text.trim() === '') return '## The spec\n\nThere is no spec yet.';
  if (context.slice === undefined) return `## The spec\n\n\`\`\`allium\n${excerpt.text}\n\`\`\``;
  return [
    `## Your slice: ${context.slice.name}`,
    `Work only on these constructs: ${excerpt.sliceConstructs.join(', ') || '(none found in the spec yet)'}.`,
    `Quoted for context only (direct neighbours): ${excerpt.neighbours.join(', ') || 'none'}.`,
    'The rest of the spec is out of scope for this pass; read the files if you must, but do not change it.',
    `\`\`\`allium\n${excerpt.text}\n\`\`\``,
  ].join('\n\n');
}

function renderTendRequest(context: PhaseContext): string {
  const request = context.tendRequest;
  if (request === undefined) return 'No specific request: resolve the verdict below.';
  const removals = request.removals ?? [];
  return removals.length === 0
    ? `${request.request}\n\nThis request removes no constructs.`
    : `${request.request}\n\nConstructs this request allows you to remove: ${removals.join(', ')}.`;
}

/**
 * Renders the prompt for one phase from its template in `templates/`: goal, slice excerpt (only the slice's
 * constructs and their direct neighbours when a slice is given), paths, previous verdict, parked questions, the
 * ground rules, and the result file path with its JSON Schema.
 * @throws WorkerError when a template is missing or a placeholder has no value.
 */
export function assemblePrompt(phase: WorkerPhase, context: PhaseContext, spec: PromptSpec): AssembledPrompt {
  const excerpt = selectSliceExcerpt(spec.sources, spec.graph, context.slice);
  const resultFile = resultFilePath(context.slug, context.tick, phase);
  const result = renderTemplate(loadTemplate('result'), {
    resultFile,
    resultSchema: renderResultJsonSchema(phase),
    resultNotes: RESULT_NOTES[phase],
    loopRecord: renderLoopRecord(phase, resultFile),
  });
  const prompt = renderTemplate(loadTemplate(phase), {
    goal: context.goal,
    slice: renderSlice(context, excerpt),
    paths: renderPaths(context),
    verdict: renderVerdict(context.previousVerdict),
    questions: renderQuestions(context),
    rules: loadTemplate('rules').trimEnd(),
    result: result.trimEnd(),
    modeAdvice: MODE_ADVICE[context.mode],
    tendRequest: renderTendRequest(context),
  });
  return { prompt: `${prompt.trimEnd()}\n`, resultFile, excerpt };
}
