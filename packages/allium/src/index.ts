/**
 * @allium-loop/allium — the engine's own reading of `.allium` specifications. Pure: it takes text and returns data,
 * touching no file system or process. The reference `allium` CLI adapter lives in `@allium-loop/verify`.
 */
export type { Diagnostic, Severity, SourceLocation } from './diagnostic.js';
export type { DependencyGraph, GraphEdge, GraphEdgeKind, GraphNode, GraphNodeKind } from './graph-types.js';
export type {
  BlockItem,
  BlockKind,
  Declaration,
  Expr,
  ExprKind,
  Ident,
  ParsedSpec,
  Suppression,
  WhenQualifier,
} from './ast.js';
export { lex, type Comment, type LexResult, type Token, type TokenKind } from './lexer.js';
export { parseSpec, SUPPORTED_VERSIONS } from './parse-spec.js';
export { applySuppressions, checkSpecs, formatDiagnostic, sortDiagnostics } from './check-specs.js';
export {
  buildModel,
  isDerived,
  type DomainModel,
  type ModelEntity,
  type ModelField,
  type WhenSet,
} from './build-model.js';
export {
  buildPlan,
  type Obligation,
  type ObligationCategory,
  type ObligationDetail,
  type PlanDependencies,
  type TestPlan,
  type TriggerSource,
} from './build-plan.js';
export {
  checkObligationClaims,
  type ObligationClaimTest,
  type ObligationReconciliation,
  type RejectedClaim,
  type RejectedClaimReason,
  type ReportedUncovered,
} from './check-obligation-claims.js';
export {
  analyzeSpecs,
  collectOpenQuestions,
  countOpenQuestions,
  type OpenQuestion,
  type SpecAnalysis,
  type SpecSource,
} from './analyze-specs.js';
export { classifyOpenQuestions, questionKey, type ClassifiedQuestions } from './classify-open-questions.js';
export { buildGraph, type GraphInput } from './build-graph.js';
export {
  buildInventory,
  diffInventory,
  fingerprint,
  type Construct,
  type ConstructKind,
  type Inventory,
  type InventoryDiff,
} from './inventory.js';
export {
  ruleDependencies,
  type EntityAccess,
  type FieldAccess,
  type RuleDependencies,
  type RuleInfo,
  type TriggerInfo,
  type TriggerKind,
} from './rule-info.js';
export type { ProvidedTrigger, SurfaceBinding, SurfaceInfo } from './surface-info.js';
export { type FileDiagnostics } from './check-specs.js';
export {
  analyseFindings,
  checkReports,
  modelReport,
  planReport,
  referenceJson,
  writeReferenceJson,
  type FileReport,
  type Finding,
  type ReportSource,
  type Reports,
} from './reports.js';
export type { UseLocator } from './check-declarations.js';
export {
  canonicalJson,
  compareOutputs,
  formatParity,
  type CodeCounts,
  type FileParity,
  type ImplementationOutput,
  type ParityTable,
} from './parity.js';
