import { open, readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { AgentCallRow, WitnessSummary } from '@allium-loop/report-html';
import { z } from 'zod';
import { RUN_SCOPE } from './report-ticks.js';

/** The upstream witness record (`witness-result.schema.json`), read leniently: extra fields are ignored. */
const WitnessSchema = z.object({
  verdict: z.enum(['PASS', 'FAIL', 'INCONCLUSIVE']),
  summary: z.string().default(''),
  checks: z
    .array(z.object({ name: z.string(), result: z.string(), ground_truth: z.string().default('') }))
    .default([]),
  violations: z.array(z.object({ violation: z.string(), routing: z.string() })).default([]),
});

/** One line of the upstream trace (`trace-entry.schema.json`): only the fields the report reads. */
const TraceEntrySchema = z.object({ tick: z.number().int(), uncovered_obligations: z.number().int() });

/** The files a run leaves beside its ledger that the report reads, when they exist. */
export interface RunArtifacts {
  readonly witness: WitnessSummary | null;
  /** Uncovered obligations per tick of the run's own loop, from `<slug>.trace.jsonl`. */
  readonly uncovered: ReadonlyMap<number, number>;
  readonly hasTrace: boolean;
  readonly calls: readonly AgentCallRow[];
}

async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** Reads `.allium-loop/<slug>.witness.json`; `null` when it is absent or not a witness record. */
async function readWitness(dir: string, slug: string): Promise<WitnessSummary | null> {
  const text = await readText(join(dir, `${slug}.witness.json`));
  if (text === undefined) return null;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = WitnessSchema.safeParse(json);
  if (!parsed.success) return null;
  const w = parsed.data;
  return {
    verdict: w.verdict,
    summary: w.summary,
    checks: w.checks.map((c) => ({ name: c.name, result: c.result, groundTruth: c.ground_truth })),
    violations: w.violations,
  };
}

async function readTrace(dir: string, slug: string): Promise<Map<number, number> | undefined> {
  const text = await readText(join(dir, `${slug}.trace.jsonl`));
  if (text === undefined) return undefined;
  const out = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const parsed = TraceEntrySchema.safeParse(JSON.parse(line));
      if (parsed.success) out.set(parsed.data.tick, parsed.data.uncovered_obligations);
    } catch {
      // A torn last line of a crashed append: skipped like the journal's.
    }
  }
  return out;
}

async function transcriptFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isFile() && e.name.endsWith('.log') && e.parentPath.split(sep).at(-1) === 'transcripts')
    .map((e) => join(e.parentPath, e.name));
}

async function readHead(path: string, bytes = 8192): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * One agent call from its transcript's header (`packages/agents` writes `key: value` lines before the prompt).
 * The file name says the tick and attempt: `<tick>-<phase>.log`, `<tick>-<phase>.2.log`.
 */
export function parseTranscriptHeader(text: string, scope: string, fileName: string): AgentCallRow {
  const header = text.split('\n--- prompt')[0] ?? '';
  const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(header)?.[1]?.trim();
  const name = /^(\d+)-([\w-]+?)(?:\.(\d+))?\.log$/.exec(fileName);
  const cost = /^\$(\d+(?:\.\d+)?)$/.exec(field('cost') ?? '');
  const duration = /^(\d+) ms$/.exec(field('duration') ?? '');
  return {
    scope,
    tick: name?.[1] === undefined ? null : Number(name[1]),
    phase: field('phase') ?? name?.[2] ?? 'unknown',
    attempt: name?.[3] === undefined ? 1 : Number(name[3]),
    startedAt: field('started') ?? null,
    durationMs: duration?.[1] === undefined ? null : Number(duration[1]),
    outcome: (field('outcome') ?? 'unknown').split(' ')[0] ?? 'unknown',
    usd: cost?.[1] === undefined ? null : Number(cost[1]),
  };
}

/** Every agent call of a run, from the transcripts under `.allium-loop/<slug>/`, oldest first. */
async function readAgentCalls(
  dir: string,
  slug: string,
  sliceIds: readonly string[],
): Promise<AgentCallRow[]> {
  const root = join(dir, slug);
  const sliceByFolder = new Map(sliceIds.map((id) => [id.replace(/[^\w.-]+/g, '-'), id]));
  const calls = await Promise.all(
    (await transcriptFiles(root)).map(async (file) => {
      const parts = relative(root, file).split(sep);
      const scope =
        parts[0] === 'slices' ? (sliceByFolder.get(parts[1] ?? '') ?? parts[1] ?? RUN_SCOPE) : RUN_SCOPE;
      return parseTranscriptHeader(await readHead(file), scope, parts.at(-1) ?? '');
    }),
  );
  return calls.sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? ''));
}

/** Reads the witness record, the trace and the agent transcripts of one run. Missing files read as empty. */
export async function readRunArtifacts(
  dir: string,
  slug: string,
  sliceIds: readonly string[],
): Promise<RunArtifacts> {
  const [witness, trace, calls] = await Promise.all([
    readWitness(dir, slug),
    readTrace(dir, slug),
    readAgentCalls(dir, slug, sliceIds),
  ]);
  return { witness, uncovered: trace ?? new Map(), hasTrace: trace !== undefined, calls };
}
