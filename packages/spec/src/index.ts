/**
 * @allium-loop/spec — the engine's own reading of `.allium` specifications. Pure: it takes text and returns data,
 * touching no file system or process. The reference `allium` CLI adapter lives in `@allium-loop/verify`.
 */
export type { Diagnostic, Severity, SourceLocation } from './diagnostic.js';
export type { DependencyGraph, GraphEdge, GraphEdgeKind, GraphNode, GraphNodeKind } from './graph-types.js';
