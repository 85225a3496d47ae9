import { parseArgs } from 'node:util';
import type { Ledger } from '@allium-loop/ledger';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import {
  answerQuestion,
  describeRun,
  listRuns,
  openStore,
  stateDir,
  type RunOverview,
} from '@allium-loop/orchestrator';
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

function summary(run: RunOverview): string {
  const state =
    run.condition === 'running' || run.condition === 'interrupted'
      ? `${run.condition} (tick ${String(run.ledger.tick)})`
      : run.condition;
  return `${run.slug}  ${state}  ${String(run.ticks)} tick(s)  "${run.ledger.goal}"`;
}

function summaryJson(run: RunOverview): Record<string, unknown> {
  return {
    slug: run.slug,
    goal: run.ledger.goal,
    status: run.condition,
    terminal: run.ledger.terminal?.state ?? null,
    ticks: run.ticks,
    ...(run.holder === undefined ? {} : { holder: run.holder }),
  };
}

/**
 * `allium-loop list [--json]`: every run recorded in this project. A run shows `running` only while a live
 * supervisor holds its lease; a run nobody drives any more shows `interrupted` (resume it).
 */
export function listCommand(): Command {
  return {
    name: 'list',
    synopsis: 'list [--json]',
    summary: 'List the runs recorded in this project.',
    run: async (args, io) => {
      const parsed = parse(args, io, 'list');
      if (parsed === undefined) return ExitCode.usage;
      const rows = await listRuns(openStore(io.cwd, io.env));
      if (parsed.json) {
        for (const row of rows) {
          io.stdout(
            `${JSON.stringify('problem' in row ? { slug: row.slug, problem: row.problem } : summaryJson(row))}\n`,
          );
        }
        return ExitCode.ok;
      }
      if (rows.length === 0) io.stdout(`No runs in ${stateDir(io.cwd)}.\n`);
      for (const row of rows)
        io.stdout(`${'problem' in row ? `${row.slug}  ${row.problem}` : summary(row)}\n`);
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
      const run = await describeRun(openStore(io.cwd, io.env), ledger);
      if (parsed.json) {
        io.stdout(`${JSON.stringify({ ...ledger, condition: run.condition, ticks: run.ticks })}\n`);
        return ExitCode.ok;
      }
      io.stdout(
        `${summary(run)}${run.holder === undefined ? '' : `  (pid ${String(run.holder.pid)} on ${run.holder.host})`}\n`,
      );
      if (run.condition === 'interrupted')
        io.stdout(`Nobody is driving this run; continue it with: allium-loop resume ${slug}\n`);
      io.stdout(renderReport(ledger));
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
      try {
        await answerQuestion({
          cwd: io.cwd,
          env: io.env,
          slug,
          questionId: id,
          answer,
          clock: { now: io.now ?? (() => Date.now()) },
        });
      } catch (error) {
        if (!AlliumLoopError.is(error)) throw error;
        io.stderr(`allium-loop answer: ${formatError(error)}\n`);
        return error.code === 'run.no_such_question' ? ExitCode.usage : ExitCode.failure;
      }
      io.stdout(`Recorded the answer to ${id}. Continue with: allium-loop resume ${slug}\n`);
      return ExitCode.ok;
    },
  };
}
