import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openStore, stateDir } from '@allium-loop/orchestrator';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { computeStats, renderStats, type RunFacts } from '../render/compute-stats.js';

async function witnessVerdict(cwd: string, slug: string): Promise<RunFacts['witnessVerdict']> {
  try {
    const record = JSON.parse(await readFile(join(stateDir(cwd), `${slug}.witness.json`), 'utf8')) as {
      verdict?: unknown;
    };
    return record.verdict === 'PASS' || record.verdict === 'FAIL' || record.verdict === 'INCONCLUSIVE'
      ? record.verdict
      : null;
  } catch {
    return null;
  }
}

/** `allium-loop stats [--json]`: convergence metrics over every run recorded in this project. */
export function statsCommand(): Command {
  return {
    name: 'stats',
    synopsis: 'stats [--json]',
    summary: 'Convergence metrics over the runs of this project (see docs/metrics.md).',
    run: async (args, io) => {
      let json = false;
      try {
        const parsed = parseArgs({ args: [...args], options: { json: { type: 'boolean' } }, strict: true });
        json = parsed.values.json === true;
      } catch (error) {
        io.stderr(`allium-loop stats: ${(error as Error).message}\n`);
        return ExitCode.usage;
      }
      const store = openStore(io.cwd, io.env);
      const runs: RunFacts[] = [];
      let unreadable = 0;
      for (const slug of await store.list()) {
        const loaded = await store.load(slug);
        if (!loaded.ok) {
          unreadable += 1;
          continue;
        }
        const journal = await store.readJournal(slug);
        runs.push({
          ledger: loaded.value.ledger,
          events: journal.events,
          witnessVerdict: await witnessVerdict(io.cwd, slug),
        });
      }
      const stats = computeStats(runs, unreadable);
      io.stdout(json ? `${JSON.stringify(stats)}\n` : renderStats(stats));
      return ExitCode.ok;
    },
  };
}
