import { describe, expect, it } from 'vitest';
import { makeProject, readLedger, runCli, writeScript, type LooseJson } from './e2e.test-helpers.js';
import { FUNCTIONS, HOUSE_V1, HOUSE_V2, INTEGRATION, code, testFile } from './house.test-helpers.js';

describe('a goal that splits into three slices', () => {
  it(
    'runs three slice loops in plan order, then the integration pass, and converges',
    { timeout: 240_000 },
    async () => {
      const dir = await makeProject({
        'package.json': '{ "type": "module", "private": true }\n',
        'allium-loop.yaml': 'testCommand: node --test\n',
        'specs/house.allium': HOUSE_V1,
        'src/house.js': 'export {};\n',
      });
      const clean = {
        phase: 'weed',
        result: { phase: 'weed', clean: true, divergences: [], summary: 'clean' },
      };
      const steps: Record<string, unknown>[] = [
        {
          phase: 'tend',
          write: { 'specs/house.allium': HOUSE_V2 },
          result: {
            phase: 'tend',
            specFiles: ['specs/house.allium'],
            openQuestions: [],
            summary: 'lamp, door, bell',
          },
        },
      ];
      FUNCTIONS.forEach((entry, index) => {
        const path = `test/${entry[1]}.test.js`;
        steps.push(
          {
            phase: 'propagate',
            write: { [path]: testFile(entry) },
            result: { phase: 'propagate', testFiles: [{ path, covers: [entry[0]] }], summary: entry[0] },
          },
          {
            phase: 'implement',
            write: { 'src/house.js': code(index + 1) },
            result: {
              phase: 'implement',
              filesChanged: ['src/house.js'],
              contestedTests: [],
              summary: entry[1],
            },
          },
          clean,
        );
      });
      steps.push(
        {
          phase: 'propagate',
          write: { 'test/integration.test.js': INTEGRATION },
          result: {
            phase: 'propagate',
            testFiles: [{ path: 'test/integration.test.js', covers: ['SwitchOn', 'OpenDoor', 'RingBell'] }],
            summary: 'together',
          },
        },
        clean,
      );
      const script = await writeScript(dir, steps);
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
      for (const [id] of goals.slice(0, 3)) expect(run.stdout).toContain(`[${String(id)}] tick 1`);
    },
  );
});
