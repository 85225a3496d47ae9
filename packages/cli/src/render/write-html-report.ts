import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createRedactor, type Ledger } from '@allium-loop/ledger';
import { openStore, stateDir } from '@allium-loop/orchestrator';
import { loadReportAssets, renderHtmlReport } from '@allium-loop/report-html';
import { buildReportModel } from './build-report-model.js';
import { readRunArtifacts } from './read-run-artifacts.js';

/** Where `report --html` writes when no `--out` is given: beside the ledger, in the git-ignored state folder. */
export function defaultReportPath(cwd: string, slug: string): string {
  return `${stateDir(cwd)}/${slug}.report.html`;
}

/**
 * Builds the HTML report of a run from its ledger, journal, witness record, trace and transcripts, redacts every
 * string with the environment's secrets and the known token shapes, and writes it to `out`. Returns the bytes
 * written. Throws `ReportAssetsError` when the chart library is missing, and the file system's error when `out`
 * cannot be written.
 */
export async function writeHtmlReport(options: {
  readonly ledger: Ledger;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: string;
  readonly now: Date;
}): Promise<number> {
  const { ledger, cwd, env } = options;
  const journal = await openStore(cwd, env).readJournal(ledger.slug);
  const artifacts = await readRunArtifacts(
    stateDir(cwd),
    ledger.slug,
    ledger.subGoals.map((g) => g.id),
  );
  const model = createRedactor(env).value(buildReportModel(ledger, journal.events, artifacts, options.now));
  const page = renderHtmlReport(model, await loadReportAssets());
  await mkdir(dirname(options.out), { recursive: true });
  await writeFile(options.out, page, 'utf8');
  return Buffer.byteLength(page);
}
