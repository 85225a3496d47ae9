import type { Diagnostic } from '@allium-loop/allium';
import { z } from 'zod';

const diagnosticSchema = z.object({
  code: z.string().nullable(),
  severity: z.enum(['error', 'warning', 'info']),
  message: z.string(),
  location: z.object({ file: z.string(), line: z.number().int(), col: z.number().int() }),
});

/** One `analyse` finding, kept as the CLI printed it beside its `type` and `summary`. */
export interface ReferenceFinding {
  readonly type: string;
  readonly summary: string;
  readonly affected_entities: readonly string[];
  readonly [extra: string]: unknown;
}

const findingSchema = z.looseObject({
  type: z.string(),
  summary: z.string(),
  affected_entities: z.array(z.string()).default([]),
});

const reportSchema = z.object({
  command: z.string(),
  spec_file: z.string(),
  diagnostics: z.array(diagnosticSchema),
  findings: z.array(findingSchema).default([]),
});

/** What `allium check`/`analyse` printed for one spec file. */
export interface ReferenceReport {
  readonly command: string;
  readonly specFile: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly findings: readonly ReferenceFinding[];
}

/** Validates one check/analyse document; returns the problems instead when it does not have the reference shape. */
export function toReferenceReport(document: unknown): ReferenceReport | string {
  const parsed = reportSchema.safeParse(document);
  if (!parsed.success) return `unexpected document: ${z.prettifyError(parsed.error).replaceAll('\n', '; ')}`;
  const { command, spec_file: specFile, diagnostics, findings } = parsed.data;
  return { command, specFile, diagnostics, findings: findings as ReferenceFinding[] };
}

/** Reads the `diagnostics` array of a plan/model document; the rest of the document is returned untouched. */
export function documentDiagnostics(document: unknown): readonly Diagnostic[] {
  const parsed = z.object({ diagnostics: z.array(diagnosticSchema) }).safeParse(document);
  return parsed.success ? parsed.data.diagnostics : [];
}
