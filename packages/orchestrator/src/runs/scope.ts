import { rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { execa } from 'execa';
import type { PhaseContext } from '@allium-loop/workers';
import { gitWorkingTree } from '../project/git.js';
import type { ProjectFiles } from '../project/project-files.js';
import { RunError } from '../run-goal.js';

/**
 * A run's scope: project-relative paths (files or folders, `/`-separated, no trailing slash) that bound every
 * phase — what the phases are shown and what they may change. Empty means the whole project.
 */
export type Scope = readonly string[];

/**
 * Checks and normalises the paths given to `--scope` (comma-separated in the flag): each must exist inside the
 * project. Throws {@link RunError} `run.bad_scope` (a usage error) naming the path otherwise.
 */
export async function normalizeScope(cwd: string, paths: readonly string[]): Promise<Scope> {
  const scope: string[] = [];
  for (const given of paths.map((p) => p.trim()).filter((p) => p !== '')) {
    const rel = relative(cwd, resolve(cwd, given)).split(sep).join('/');
    if (rel === '' || rel === '.') return [];
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new RunError(`--scope ${given} is outside the project.`, {
        code: 'run.bad_scope',
        hint: 'Give paths inside the project, e.g. --scope src/billing,test/billing,specs/billing.allium.',
      });
    if ((await stat(join(cwd, rel)).catch(() => undefined)) === undefined)
      throw new RunError(`--scope ${given}: no such file or folder in the project.`, {
        code: 'run.bad_scope',
        hint: 'Give existing paths, comma-separated, e.g. --scope src/billing,test/billing.',
      });
    if (rel.startsWith('.allium-loop'))
      throw new RunError(`--scope ${given} is the engine's state directory.`, { code: 'run.bad_scope' });
    scope.push(rel);
  }
  return [...new Set(scope)].sort();
}

/** Whether a project-relative path lies in the scope (an empty scope holds everything). */
export function inScope(scope: Scope, path: string): boolean {
  return scope.length === 0 || scope.some((root) => path === root || path.startsWith(`${root}/`));
}

/** The project's files a phase is shown: only those in the scope. */
export function scopedFiles(files: ProjectFiles, scope: Scope): ProjectFiles {
  if (scope.length === 0) return files;
  const keep = (paths: readonly string[]) => paths.filter((path) => inScope(scope, path));
  return { spec: keep(files.spec), tests: keep(files.tests), code: keep(files.code) };
}

/** A phase's context told its scope: the prompt says where it may work and that edits elsewhere are reverted. */
export function withScopeNote(context: PhaseContext, scope: Scope): PhaseContext {
  if (scope.length === 0) return context;
  const note = `Scope of this run: read and change only ${scope.join(', ')}. Write tests only there. The engine reverts any edit outside the scope and records it as a violation.`;
  const verdict = context.previousVerdict ?? { failingTests: [], divergences: [], structuralErrors: [] };
  return { ...context, previousVerdict: { ...verdict, notes: [...(verdict.notes ?? []), note] } };
}

/** One edit outside the scope that the engine put back, as a journal `violation` event (without `at`/`tick`). */
export interface ScopeViolation {
  readonly type: 'violation';
  readonly kind: 'outside_scope';
  readonly path: string;
  readonly detail: string;
  readonly reverted: boolean;
}

/**
 * Watches one agent phase: `before()` records the working tree, `after()` lists the paths the phase added,
 * changed or deleted outside the scope and puts each back as it was (a changed or deleted file restored from the
 * recorded tree, an added file removed), returning one violation per path. Outside git there is nothing to compare
 * and nothing is reverted. The user's index and branch are never touched. Nothing happens for an empty scope.
 * `hashTree` hashes the working tree (the run's git session, when it has one).
 */
export function scopeGuard(
  cwd: string,
  scope: Scope,
  hashTree: () => Promise<string | null> = () => gitWorkingTree(cwd),
): { before(): Promise<void>; after(phase: string): Promise<ScopeViolation[]> } {
  let tree: string | null = null;
  return {
    async before() {
      tree = scope.length === 0 ? null : await hashTree();
    },
    async after(phase) {
      if (tree === null) return [];
      const now = await hashTree();
      if (now === null || now === tree) return [];
      const diff = await execa('git', ['diff-tree', '-r', '--no-renames', '--name-status', '-z', tree, now], {
        cwd,
        reject: false,
      });
      if (diff.exitCode !== 0) return [];
      const fields = diff.stdout.split('\0').filter((f) => f !== '');
      const violations: ScopeViolation[] = [];
      for (let i = 0; i + 1 < fields.length; i += 2) {
        const status = fields[i]!;
        const path = fields[i + 1]!;
        if (inScope(scope, path)) continue;
        const reverted = await putBack(cwd, tree, status, path);
        const what = status === 'A' ? 'created' : status === 'D' ? 'deleted' : 'changed';
        violations.push({
          type: 'violation',
          kind: 'outside_scope',
          path,
          detail: `the ${phase} phase ${what} ${path}, outside the run's scope (${scope.join(', ')}); ${reverted ? 'reverted' : 'could not be reverted'}`,
          reverted,
        });
      }
      return violations;
    },
  };
}

async function putBack(cwd: string, tree: string, status: string, path: string): Promise<boolean> {
  if (status === 'A') {
    await rm(join(cwd, path), { force: true });
    return true;
  }
  const restored = await execa('git', ['restore', `--source=${tree}`, '--worktree', '--', path], {
    cwd,
    reject: false,
  });
  return restored.exitCode === 0;
}
