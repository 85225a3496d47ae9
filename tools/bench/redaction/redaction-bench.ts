// Benchmark: time to redact adversarial megabytes (no newlines, long identifier runs, near-miss keywords).
// Run: node --conditions=development --import tsx tools/bench/redaction/redaction-bench.ts [sizeKiB ...]
// Each case runs in its own child process with a time budget, so a super-linear redactor is reported as
// "> budget" instead of freezing the benchmark.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createRedactor } from '@allium-loop/ledger';

const REPEATS = 5;
const BUDGET_MS = 20_000;

/** Builds `bytes` characters of one adversarial shape (repeating `unit`, with an optional tail). */
function fill(unit: string, bytes: number, tail = ''): string {
  return unit.repeat(Math.ceil((bytes - tail.length) / unit.length)).slice(0, bytes - tail.length) + tail;
}

const CASES: Record<string, (bytes: number) => string> = {
  // One long run of identifier characters; a keyword elsewhere lets the cheap pre-check pass.
  'identifier-run': (n) => fill('a', n, ' key'),
  // Keywords with no separator and no value, back to back.
  'near-miss-keywords': (n) => fill('tokenx_secret-passwd.', n),
  // Keyword, separator, a value with no digit: every keyword starts a failing value scan.
  'assignments-without-digits': (n) => fill('token:', n),
  // Dotted words with no `://`: every word boundary starts a URL scheme scan.
  'dotted-words': (n) => fill('a.b-c+', n, ' auth'),
  // Private-key headers and no end line.
  'pem-headers-without-end': (n) => fill('-----BEGIN RSA PRIVATE KEY-----', n),
  // JWT-like starts with no second part.
  'jwt-like': (n) => fill('eyJabcdefgh-', n),
  // `Bearer` followed by long runs without a digit.
  'bearer-runs': (n) => fill(`Bearer ${'x'.repeat(64)} `, n),
  // Ordinary log lines with a few real secrets (throughput on realistic text).
  'log-lines': (n) =>
    fill(
      'ok 12 - closes the tally (3.2 ms)\nexport API_TOKEN=abc123def456\nGET https://bob:pw12345@example.com/x\n',
      n,
    ),
};

function once(name: string, bytes: number): number {
  const text = CASES[name]!(bytes);
  const redactor = createRedactor({ DEPLOY_PASSWORD: 'correct-horse-battery' });
  const started = process.hrtime.bigint();
  redactor.text(text);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

if (process.argv[2] === '--one') {
  process.stdout.write(String(once(process.argv[3]!, Number(process.argv[4]))));
} else {
  const sizesKiB = process.argv.slice(2).map(Number);
  const sizes = sizesKiB.length > 0 ? sizesKiB : [64, 1024, 4096];
  const self = fileURLToPath(import.meta.url);
  for (const name of Object.keys(CASES)) {
    const cells: string[] = [];
    let overBudget = false;
    for (const kib of sizes) {
      if (overBudget) {
        cells.push(`${kib} KiB: skipped`);
        continue;
      }
      const runs: number[] = [];
      for (let i = 0; i < REPEATS && !overBudget; i += 1) {
        try {
          const out = execFileSync(
            process.execPath,
            ['--conditions=development', '--import', 'tsx', self, '--one', name, String(kib * 1024)],
            { timeout: BUDGET_MS, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
          );
          runs.push(Number(out));
        } catch {
          overBudget = true;
        }
      }
      cells.push(
        overBudget ? `${kib} KiB: > ${BUDGET_MS / 1000} s` : `${kib} KiB: ${median(runs).toFixed(1)} ms`,
      );
    }
    console.log(`${name.padEnd(28)} ${cells.join('   ')}`);
  }
  console.log(`(median of ${REPEATS} runs per cell, each in a fresh process; load ${(await import('node:os')).loadavg()[0]!.toFixed(2)})`);
}
