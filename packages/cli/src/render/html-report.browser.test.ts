import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { reportCommand } from '../commands/report.js';
import { copyDemoRun, DEMO_SLUG } from './html-report.test-helpers.js';

/** The system Chromium (`apt-get install chromium`), or the one named by CHROMIUM_PATH. */
function findChromium(): string | undefined {
  const candidates = [
    process.env['CHROMIUM_PATH'],
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
  ];
  return candidates.find((path): path is string => path !== undefined && path !== '' && existsSync(path));
}

/** Screenshots land here (git-ignored), for a person to look at after CI. */
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));

const executable = findChromium();
const required = process.env['ALLIUM_LOOP_REQUIRE_BROWSER'] === '1';
if (executable === undefined) {
  const message =
    '!!! html-report browser test SKIPPED: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH) !!!';
  if (required) throw new Error(`${message} — ALLIUM_LOOP_REQUIRE_BROWSER=1 makes this a failure`);
  console.warn(message);
}

describe.skipIf(executable === undefined)('the demo run’s HTML report in a real browser (Chromium)', () => {
  let browser: Browser;
  let cwd: string;
  let page: string;

  beforeAll(async () => {
    cwd = await copyDemoRun();
    const io = createRecordingIo(cwd);
    const code = await reportCommand({ open: () => Promise.resolve(false) }).run(
      [DEMO_SLUG, '--html', '--out', 'report.html'],
      io,
    );
    expect(code, io.err()).toBe(0);
    page = pathToFileURL(join(cwd, 'report.html')).href;
    browser = await chromium.launch({ executablePath: executable!, args: ['--no-sandbox'] });
    await mkdir(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    if (cwd !== undefined) await rm(cwd, { recursive: true, force: true });
  });

  it('loads with no console error and no network request; one chart point per tick, one DAG node per slice', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const tab = await context.newPage();
    const problems: string[] = [];
    const requests: string[] = [];
    tab.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    tab.on('request', (r) => requests.push(r.url()));
    await tab.goto(page);
    await tab.waitForFunction(() => 'alliumReport' in globalThis);
    const points = await tab.evaluate(() => {
      const report = (
        globalThis as unknown as { alliumReport: { charts: Record<string, { data: unknown[][] }> } }
      ).alliumReport;
      return report.charts['convergence']?.data[0]?.length;
    });
    const tableRows = await tab.locator('table.ticks tbody tr').count();
    expect(tableRows).toBe(4);
    expect(points).toBe(tableRows);
    // The chart really drew: uPlot's canvas has a size and its legend lists the series.
    const canvas = await tab.locator('#chart-convergence canvas').boundingBox();
    expect(canvas?.width ?? 0).toBeGreaterThan(300);
    await expect(tab.locator('#chart-convergence .u-legend').textContent()).resolves.toContain(
      'tests passing',
    );
    expect(await tab.locator('svg#slice-dag .dag-node').count()).toBe(3);
    expect(await tab.locator('svg#slice-dag .dag-edge').count()).toBe(3);
    await tab.screenshot({ path: join(ARTIFACTS, 'html-report.png'), fullPage: true });
    await tab.locator('#convergence').screenshot({ path: join(ARTIFACTS, 'html-report-chart.png') });
    await tab.locator('#slices').screenshot({ path: join(ARTIFACTS, 'html-report-dag.png') });
    expect(problems).toEqual([]);
    expect(requests).toEqual([page]);
    await context.close();
  });

  it('reads with JavaScript off: the numbers are in tables and the chart says where they are', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const tab = await context.newPage();
    await tab.goto(page);
    await expect(tab.locator('#chart-convergence .nojs').isVisible()).resolves.toBe(true);
    expect(await tab.locator('table.ticks tbody tr').count()).toBe(4);
    expect(await tab.locator('svg#slice-dag .dag-node').count()).toBe(3);
    await expect(tab.locator('#calls tbody tr').count()).resolves.toBe(12);
    await context.close();
  });

  it('prints: the PDF keeps the chart and the tables', async () => {
    const context = await browser.newContext();
    const tab = await context.newPage();
    await tab.goto(page);
    await tab.waitForFunction(() => 'alliumReport' in globalThis);
    await tab.emulateMedia({ media: 'print' });
    await expect(tab.locator('#chart-convergence canvas').isVisible()).resolves.toBe(true);
    await expect(tab.locator('table.ticks').isVisible()).resolves.toBe(true);
    const pdf = await tab.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 4).toString()).toBe('%PDF');
    await context.close();
  });
});
