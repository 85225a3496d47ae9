import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { err, ok, type Result } from '@allium-loop/errors';
import { z } from 'zod';

/**
 * An agent-loop setup read as it is: `.loop/config.json` (mode, iteration cap, evaluator retries, skip-eval, scope
 * budgets) and the custom prompts `prompts/{generator,evaluator}/_base.md` plus `{mode}.md`, with their
 * `{{TEMPLATE_VARIABLES}}`. Nothing here decides policy; `story-program.ts` does.
 */

const Budget = z.union([z.string(), z.number(), z.boolean()]);

/** `.loop/config.json`. Keys other versions of the tool write are kept and ignored. */
export const LoopConfigSchema = z.looseObject({
  mode: z.string().min(1).optional(),
  maxIterations: z.number().int().positive().optional(),
  evalRetries: z.number().int().positive().optional(),
  skipEval: z.boolean().optional(),
  /** Either flat (`{"maxFilesToRead": 20}`) or by mode (`{"implement": {"maxFilesToRead": 20}}`). */
  scopeBudgets: z.record(z.string(), z.union([Budget, z.record(z.string(), Budget)])).optional(),
});

/** A parsed `.loop/config.json`. */
export type LoopConfig = z.infer<typeof LoopConfigSchema>;

/** The mode an agent-loop setup runs when its config names none. */
export const DEFAULT_LOOP_MODE = 'implement';

/** The `.loop/` directory of a project. */
export function loopDir(cwd: string): string {
  return join(cwd, '.loop');
}

/** Reads `<cwd>/.loop/config.json`: `undefined` when there is none; issues name the file. */
export async function readLoopConfig(cwd: string): Promise<Result<LoopConfig | undefined>> {
  const path = join(loopDir(cwd), 'config.json');
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return ok(undefined);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return err([`${path}: not valid JSON: ${(error as Error).message}`]);
  }
  const parsed = LoopConfigSchema.safeParse(value);
  if (!parsed.success)
    return err(
      parsed.error.issues.map(
        (issue) => `${path}: ${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`,
      ),
    );
  return ok(parsed.data);
}

/** The scope budgets that apply to `mode`: the mode's own object when the config has one, else the flat values. */
export function scopeBudgetsFor(config: LoopConfig, mode: string): Record<string, string | number | boolean> {
  const budgets = config.scopeBudgets ?? {};
  const own = budgets[mode];
  if (typeof own === 'object') return { ...own };
  return Object.fromEntries(
    Object.entries(budgets).filter((entry): entry is [string, string | number | boolean] => {
      return typeof entry[1] !== 'object';
    }),
  );
}

/** `maxFilesToRead` → `MAX_FILES_TO_READ` (an already upper-case key stays as it is). */
export function templateVariableName(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();
}

/** Fills `{{NAME}}` placeholders; unknown names are left as they are. Pure. */
export function fillTemplate(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g, (whole, name: string) => variables[name] ?? whole);
}

/** The placeholders of `text` that `variables` does not fill. */
export function unfilledVariables(text: string, variables: Readonly<Record<string, string>>): string[] {
  const names = [...text.matchAll(/\{\{\s*([A-Za-z0-9_]+)\s*\}\}/g)].map((m) => m[1]!);
  return [...new Set(names.filter((name) => variables[name] === undefined))];
}

/**
 * The prompt folders searched, first match wins, as agent-loop does: the project's `.loop/prompts/`, the plugin
 * install `${CLAUDE_PLUGIN_ROOT}/prompts/`, then each plugin cache `~/.claude/plugins/cache/agent-loop/agent-loop/
 * <version>/prompts/`.
 */
export async function promptLocations(
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  home: string = env['HOME'] ?? homedir(),
): Promise<string[]> {
  const cache = join(home, '.claude', 'plugins', 'cache', 'agent-loop', 'agent-loop');
  const versions = await readdir(cache).catch(() => [] as string[]);
  const root = env['CLAUDE_PLUGIN_ROOT'];
  return [
    join(loopDir(cwd), 'prompts'),
    ...(root === undefined || root === '' ? [] : [join(root, 'prompts')]),
    ...versions.sort().map((version) => join(cache, version, 'prompts')),
  ];
}

/** A role's custom prompt: `_base.md` and, when present beside it, `{mode}.md`. */
export interface PromptTemplate {
  readonly dir: string;
  readonly base: string;
  readonly mode: string | undefined;
}

/** The first location holding `<role>/_base.md`, with its `<role>/<mode>.md` when there is one. */
export async function loadPromptTemplate(
  locations: readonly string[],
  role: 'generator' | 'evaluator',
  mode: string,
): Promise<PromptTemplate | undefined> {
  for (const location of locations) {
    const dir = join(location, role);
    const base = await readFile(join(dir, '_base.md'), 'utf8').catch(() => undefined);
    if (base === undefined) continue;
    const own = await readFile(join(dir, `${mode}.md`), 'utf8').catch(() => undefined);
    return { dir, base, mode: own };
  }
  return undefined;
}
