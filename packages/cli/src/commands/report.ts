import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatError } from '@allium-loop/errors';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { renderReport } from '../render/render-report.js';
import { defaultReportPath, writeHtmlReport } from '../render/write-html-report.js';
import { loadRun } from './runs.js';

/** What `report` needs from outside besides its io: a way to open the written file. */
export interface ReportDeps {
  /** Opens a file in the system viewer; resolves false when it could not. */
  readonly open: (path: string) => Promise<boolean>;
}

interface ReportArgs {
  readonly slug: string;
  readonly html: boolean;
  readonly out: string | undefined;
  readonly open: boolean;
}

function parseReportArgs(args: readonly string[]): ReportArgs | string {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { html: { type: 'boolean' }, out: { type: 'string' }, open: { type: 'boolean' } },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    return (error as Error).message;
  }
  const [slug, ...rest] = parsed.positionals;
  if (slug === undefined || rest.length > 0) return 'name one run, e.g. allium-loop report add-gift-cards.';
  const html = parsed.values.html === true;
  if (!html && (parsed.values.out !== undefined || parsed.values.open === true))
    return '--out and --open go with --html.';
  return { slug, html, out: parsed.values.out, open: parsed.values.open === true };
}

/**
 * `allium-loop report <slug> [--html [--out file] [--open]]`: the report of a run, as text, or as one
 * self-contained HTML file (default `.allium-loop/<slug>.report.html`).
 */
export function reportCommand(deps: ReportDeps): Command {
  return {
    name: 'report',
    synopsis: 'report <slug> [--html [--out <file>] [--open]]',
    summary: 'Print the report of a run, or write it as one HTML file.',
    run: async (args, io) => {
      const parsed = parseReportArgs(args);
      if (typeof parsed === 'string') {
        io.stderr(`allium-loop report: ${parsed}\n`);
        return ExitCode.usage;
      }
      const ledger = await loadRun(io, parsed.slug);
      if (ledger === undefined) return ExitCode.failure;
      if (!parsed.html) {
        io.stdout(renderReport(ledger));
        return ExitCode.ok;
      }
      const out =
        parsed.out === undefined ? defaultReportPath(io.cwd, ledger.slug) : resolve(io.cwd, parsed.out);
      try {
        const now = new Date((io.now ?? Date.now)());
        const bytes = await writeHtmlReport({ ledger, cwd: io.cwd, env: io.env, out, now });
        io.stdout(
          `Wrote the HTML report of ${ledger.slug} to ${out} (${String(Math.ceil(bytes / 1024))} KB).\n`,
        );
      } catch (error) {
        io.stderr(`allium-loop report: ${formatError(error)}\n`);
        return ExitCode.failure;
      }
      if (parsed.open && !(await deps.open(out)))
        io.stderr(`allium-loop report: could not open a viewer; open ${out} yourself.\n`);
      return ExitCode.ok;
    },
  };
}
