import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { AlliumLoopError } from '@allium-loop/errors';
import type { ReportAssets } from './render-html-report.js';

/** The chart library's files could not be read (a broken install). */
export class ReportAssetsError extends AlliumLoopError {
  constructor(cause: unknown) {
    super('the chart library (uplot) for the HTML report could not be read', {
      code: 'report.assets_missing',
      cause,
      hint: 'Reinstall allium-loop (npm ci) so that its dependency uplot is present.',
    });
  }
}

/**
 * Reads the pinned chart library (uPlot's IIFE build and stylesheet) from this package's dependencies, to be
 * inlined into a report. Throws {@link ReportAssetsError} when the files are missing.
 */
export async function loadReportAssets(): Promise<ReportAssets> {
  try {
    const require = createRequire(import.meta.url);
    const [chartJs, chartCss, manifest] = await Promise.all([
      readFile(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
      readFile(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
      readFile(require.resolve('uplot/package.json'), 'utf8'),
    ]);
    const version = (JSON.parse(manifest) as { version?: unknown }).version;
    return { chartJs, chartCss, chartLibrary: `uPlot ${typeof version === 'string' ? version : ''}`.trim() };
  } catch (cause) {
    throw new ReportAssetsError(cause);
  }
}
