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

/** The generator's prompt: implement one story; previous rejections are in its notes. */
export function generatorPrompt(story: UserStory, config: StoryModeConfig, progressPath: string): string {
  return [
    'Implement exactly one user story in this repository.',
    '',
    ...storyBlock(story),
    ...(story.notes === undefined || story.notes === ''
      ? []
      : ['', 'Notes, including why earlier attempts were rejected:', story.notes]),
    '',
    `The PRD is ${config.prdPath} and the log of earlier iterations is ${progressPath}; read them, but do not edit either:`,
    'the engine records the outcome itself, and edits to acceptance criteria stop the run.',
    ...(config.verifyCommand === undefined
      ? []
      : [`Before the story can pass, the engine runs: ${config.verifyCommand}`]),
    'An independent reviewer will then try to show that the story is not done. Your reply text is ignored; only the',
    'files you change count.',
  ].join('\n');
}

/** The evaluator's prompt: a fresh context asked to disprove the work, writing its verdict to the result file. */
export function evaluatorPrompt(story: UserStory, config: StoryModeConfig, resultFile: string): string {
  return [
    'You are reviewing work another agent claims completes a user story. Assume it is not done until the code',
    'proves otherwise: read the changed code, run what you need, and look for any acceptance criterion that is',
    'unmet, faked, hard-coded or untested.',
    '',
    ...storyBlock(story),
    '',
    `Do not change any file. The PRD is ${config.prdPath}.`,
    `Write your verdict as JSON to ${resultFile} (write a temp file beside it, then rename it):`,
    '  {"verdict": "PASS"}  when every criterion is met, or',
    '  {"verdict": "REJECT", "reason": "<the first unmet criterion and the evidence>"}',
    'A missing or malformed verdict counts as REJECT. Your reply text is ignored.',
  ].join('\n');
}
