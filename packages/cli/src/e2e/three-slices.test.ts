import { describe, expect, it } from 'vitest';
import {
  makeProject,
  readLedger,
  readWitness,
  runCli,
  writeScript,
  type LooseJson,
} from './e2e.test-helpers.js';
import { HOUSE_PROJECT, houseSteps } from './house.test-helpers.js';

describe('a goal that splits into three slices', () => {
  it(
    'runs three slice loops in plan order, then the integration pass, and converges',
    { timeout: 240_000 },
    async () => {
      const dir = await makeProject(HOUSE_PROJECT);
      const script = await writeScript(dir, houseSteps());
      const run = await runCli(
        ['run', 'add lamps, doors and bells to the house', '--agent', 'replay', '--agent-script', script],
        dir,
      );
      expect(run.stdout).toContain('→ Slices');
      expect(run.code).toBe(0);
      const ledger = await readLedger(dir, 'add-lamps-doors-and-bells-to-the-house');
      const goals = (ledger['subGoals'] as LooseJson[]).map((g) => [g['id'], g['status']]);
      expect(goals).toHaveLength(4);
      expect(goals.at(-1)).toEqual(['integration', 'converged']);
      expect(goals.every(([, status]) => status === 'converged')).toBe(true);
      expect(ledger['terminal'].state).toBe('converged');
      // Each slice passed its own witness gate, and the assembled whole passed the run's.
      expect((await readWitness(dir, 'add-lamps-doors-and-bells-to-the-house'))['verdict']).toBe('PASS');
      for (const [id] of goals) expect(run.stdout).toContain(`[${String(id)}] witness: PASS`);
      for (const [id] of goals.slice(0, 3)) expect(run.stdout).toContain(`[${String(id)}] tick 1`);
    },
  );
});
