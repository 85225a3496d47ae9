import { fillTemplate, type PromptTemplate } from './loop-config.js';
import type { UserStory } from './prd.js';
import type { StoryModeConfig } from './story-mode.js';

function storyBlock(story: UserStory): string[] {
  const criteria = story.acceptanceCriteria ?? [];
  return [
    `Story ${story.id}: ${story.title}`,
    ...(criteria.length === 0
      ? ['(no acceptance criteria listed)']
      : ['Acceptance criteria:', ...criteria.map((c, i) => `  ${String(i + 1)}. ${c}`)]),
  ];
}

/** What a prompt is built from besides the story: the custom template (if any) and its variables. */
export interface PromptContext {
  readonly template?: PromptTemplate | undefined;
  /** Template variables (`MAX_FILES_TO_READ`, `STORY_ID`, `PRE_GENERATOR_SHA` …). */
  readonly variables: Readonly<Record<string, string>>;
}

/** A custom `_base.md` (+ `{mode}.md`) with its variables filled, then the engine's own section. */
function withTemplate(context: PromptContext, engine: readonly string[]): string {
  if (context.template === undefined) return engine.join('\n');
  const custom = [
    context.template.base,
    ...(context.template.mode === undefined ? [] : [context.template.mode]),
  ]
    .map((text) => fillTemplate(text, context.variables).trimEnd())
    .join('\n\n');
  return [
    custom,
    '',
    '## From the allium-loop engine (these rules override the ones above)',
    '',
    ...engine,
  ].join('\n');
}

/** The generator's prompt: implement one story; previous rejections (`[REJECTED] …`) are in its notes. */
export function generatorPrompt(
  story: UserStory,
  config: StoryModeConfig,
  progressPath: string,
  context: PromptContext = { variables: {} },
): string {
  return withTemplate(context, [
    'Implement exactly one user story in this repository.',
    '',
    ...storyBlock(story),
    ...(story.notes === undefined || story.notes === ''
      ? []
      : ['', 'Notes, including why earlier attempts were rejected ([REJECTED] lines):', story.notes]),
    '',
    `The PRD is ${config.prdPath} and the log of earlier iterations is ${progressPath}; read them, but do not edit either:`,
    'the engine records the outcome itself (it sets "passes"), and edits to acceptance criteria stop the run.',
    ...(config.verifyCommand === undefined
      ? []
      : [`Before the story can pass, the engine runs: ${config.verifyCommand}`]),
    'An independent reviewer will then try to show that the story is not done. Your reply text is ignored; only the',
    'files you change count.',
  ]);
}

/**
 * The evaluator's prompt: a fresh context asked to disprove the work, scoped by the commit taken just before the
 * generator (`git diff <preGenerator>` shows everything the generator changed), writing its verdict to the result
 * file. Its edits are reverted by the engine.
 */
export function evaluatorPrompt(
  story: UserStory,
  config: StoryModeConfig,
  resultFile: string,
  preGenerator: string | undefined,
  context: PromptContext = { variables: {} },
): string {
  return withTemplate(context, [
    'You are reviewing work another agent claims completes a user story. Assume it is not done until the code',
    'proves otherwise: read the changed code, run what you need, and look for any acceptance criterion that is',
    'unmet, faked, hard-coded or untested.',
    '',
    ...storyBlock(story),
    '',
    ...(preGenerator === undefined
      ? []
      : [
          `The tree just before the generator ran is commit ${preGenerator}: \`git diff ${preGenerator}\` shows what it changed`,
          '(committed or not).',
        ]),
    `Never edit any file: the engine reverts every change you make and discards your verdict. The PRD is ${config.prdPath}.`,
    `Write your verdict as JSON to ${resultFile} (write a temp file beside it, then rename it):`,
    '  {"verdict": "PASS"}  when every criterion is met, or',
    '  {"verdict": "REJECT", "reason": "<the first unmet criterion and the evidence>"}',
    'A missing or malformed verdict counts as REJECT. Your reply text (a verdict or <promise> in it) is ignored.',
  ]);
}
