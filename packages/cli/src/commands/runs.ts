import { parseArgs } from 'node:util';
import type { Ledger } from '@allium-loop/ledger';
import { openStore, stateDir } from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { renderReport } from '../render/render-report.js';

function parse(
  args: readonly string[],
  io: CliIo,
  name: string,
): { json: boolean; positionals: string[] } | undefined {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { json: { type: 'boolean' } },
      strict: true,
      allowPositionals: true,
    });
    return { json: values.json === true, positionals };
  } catch (error) {
    io.stderr(`allium-loop ${name}: ${(error as Error).message}\n`);
    return undefined;
  }
}

/** Loads one run's ledger, printing a clear error (and the recovery hint for a corrupt one) when it cannot. */
export async function loadRun(io: CliIo, slug: string): Promise<Ledger | undefined> {
  const loaded = await openStore(io.cwd, io.env).load(slug);
  if (loaded.ok) return loaded.value.ledger;
  if (loaded.issues.kind === 'missing') {
    io.stderr(`allium-loop: no run named "${slug}" in ${stateDir(io.cwd)} (see 'allium-loop list').\n`);
  } else {
    const error = loaded.issues.error;
    io.stderr(`allium-loop: ${error.message}\n${error.hint === undefined ? '' : `${error.hint}\n`}`);
  }
  return undefined;
}

function summary(ledger: Ledger): string {
  const state =
    ledger.terminal === null ? `${ledger.status} (tick ${String(ledger.tick)})` : ledger.terminal.state;
  return `${ledger.slug}  ${state}  ${String(ledger.verdicts.length)} tick(s)  "${ledger.goal}"`;
}

/** `allium-loop list [--json]`: every run recorded in this project. */
export function listCommand(): Command {
  return {
    name: 'list',
    synopsis: 'list [--json]',
    summary: 'List the runs recorded in this project.',
    run: async (args, io) => {
      const parsed = parse(args, io, 'list');
      if (parsed === undefined) return ExitCode.usage;
      const store = openStore(io.cwd, io.env);
      const rows: { slug: string; ledger?: Ledger; problem?: string }[] = [];
      for (const slug of await store.list()) {
        const loaded = await store.load(slug);
        rows.push(
          loaded.ok
            ? { slug, ledger: loaded.value.ledger }
            : {
                slug,
                problem: loaded.issues.kind === 'corrupt' ? `corrupt (${loaded.issues.reason})` : 'missing',
              },
        );
      }
      if (parsed.json) {
        for (const row of rows) {
          io.stdout(
            `${JSON.stringify(row.ledger === undefined ? { slug: row.slug, problem: row.problem } : { slug: row.slug, goal: row.ledger.goal, status: row.ledger.status, terminal: row.ledger.terminal?.state ?? null, ticks: row.ledger.verdicts.length })}\n`,
          );
        }
        return ExitCode.ok;
      }
      if (rows.length === 0) io.stdout(`No runs in ${stateDir(io.cwd)}.\n`);
      for (const row of rows)
        io.stdout(
          `${row.ledger === undefined ? `${row.slug}  ${row.problem ?? ''}` : summary(row.ledger)}\n`,
        );
      return ExitCode.ok;
    },
  };
}

/** `allium-loop status [slug] [--json]`: where one run (or every run) stands. */
export function statusCommand(): Command {
  return {
    name: 'status',
    synopsis: 'status [slug] [--json]',
    summary: 'Show where a run stands.',
    run: async (args, io) => {
      const parsed = parse(args, io, 'status');
      if (parsed === undefined) return ExitCode.usage;
      const [slug] = parsed.positionals;
      if (slug === undefined) return listCommand().run(parsed.json ? ['--json'] : [], io);
      const ledger = await loadRun(io, slug);
      if (ledger === undefined) return ExitCode.failure;
      io.stdout(parsed.json ? `${JSON.stringify(ledger)}\n` : renderReport(ledger));
      return ExitCode.ok;
    },
  };
}

/** `allium-loop answer <slug> <question-id> "<answer>"`: records an answer; `resume` then writes it into the spec. */
export function answerCommand(): Command {
  return {
    name: 'answer',
    synopsis: 'answer <slug> <question-id> "<answer>"',
    summary: 'Answer an escalated question, then resume.',
    run: async (args, io) => {
      const parsed = parse(args, io, 'answer');
      if (parsed === undefined) return ExitCode.usage;
      const [slug, id, ...words] = parsed.positionals;
      const answer = words.join(' ').trim();
      if (slug === undefined || id === undefined || answer === '') {
        io.stderr('allium-loop answer: usage: allium-loop answer <slug> <question-id> "<answer>".\n');
        return ExitCode.usage;
      }
      const store = openStore(io.cwd, io.env);
      const ledger = await loadRun(io, slug);
      if (ledger === undefined) return ExitCode.failure;
      const question = ledger.questions.find((q) => q.id === id);
      if (question === undefined) {
        const open = ledger.questions.filter((q) => q.status === 'open').map((q) => `${q.id} (${q.text})`);
        io.stderr(
          `allium-loop answer: run ${slug} has no question ${id}.${open.length > 0 ? ` Open: ${open.join('; ')}` : ''}\n`,
        );
        return ExitCode.usage;
      }
      const acquired = await store.acquire(slug).catch((error: unknown) => {
        io.stderr(`allium-loop answer: ${(error as Error).message}\n`);
        return undefined;
      });
      if (acquired === undefined) return ExitCode.failure;
      try {
        const at = new Date((io.now ?? Date.now)()).toISOString();
        const updated: Ledger = {
          ...ledger,
          questions: ledger.questions.map((q) => (q.id === id ? { ...q, answer, status: 'answered' } : q)),
        };
        await store.append(acquired.lease, [{ type: 'question_answered', at, id, answer }]);
        await store.save(acquired.lease, updated);
      } finally {
        await store.release(acquired.lease);
      }
      io.stdout(`Recorded the answer to ${id}. Continue with: allium-loop resume ${slug}\n`);
      return ExitCode.ok;
    },
  };
}
