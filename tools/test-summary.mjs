// Sums vitest JSON reports (packages/*/test-results.json) into the plain closing line CI reads:
// `tests: N passed, N failed` (with `, N skipped` when any were skipped). Exits 1 when no report was found,
// so a run that executed no test cannot pass as green.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
let passed = 0;
let failed = 0;
let skipped = 0;
let reports = 0;
for (const dir of readdirSync(join(root, 'packages'))) {
  const file = join(root, 'packages', dir, 'test-results.json');
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  reports += 1;
  passed += report.numPassedTests ?? 0;
  // A test file that fails to load counts as a failure even though it ran no test.
  failed +=
    (report.numFailedTests ?? 0) +
    (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0)
      .length;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
if (reports === 0) {
  console.error('test-summary: no vitest JSON report found under packages/*/test-results.json');
  process.exit(1);
}
