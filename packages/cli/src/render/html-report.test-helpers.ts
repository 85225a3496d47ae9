import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The slug of the recorded demo run in `fixtures/demo-run/`. */
export const DEMO_SLUG = 'add-loans-returns-and-overdue-notices-to-the';

/** Copies the recorded demo run into a fresh project folder (as `.allium-loop/`) and returns the folder. */
export async function copyDemoRun(): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'allium-loop-report-'));
  const state = fileURLToPath(new URL('./fixtures/demo-run/state/', import.meta.url));
  await cp(state, join(cwd, '.allium-loop'), { recursive: true });
  return cwd;
}
