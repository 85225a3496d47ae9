import { kidsOf, type Expr, type ParsedSpec } from './ast.js';
import type { SourceLocation } from './diagnostic.js';
import { clausesOf, type NamedBlock } from './spec-index.js';
import { calleeName, locationOf, sourceText, walkExpr } from './walk.js';

/** A `facing`/`context` binding of a surface: its name and the type it names. */
export interface SurfaceBinding {
  readonly binding: string;
  readonly type: string;
  readonly location: SourceLocation;
}

/** A trigger a surface provides, with the names passed positionally. */
export interface ProvidedTrigger {
  readonly name: string;
  readonly args: readonly string[];
  readonly location: SourceLocation;
}

/** A surface as data. */
export interface SurfaceInfo {
  readonly name: string;
  readonly location: SourceLocation;
  readonly actor?: SurfaceBinding;
  readonly context?: SurfaceBinding;
  readonly provides: readonly ProvidedTrigger[];
  /** Each exposed item as written. */
  readonly exposes: readonly string[];
  readonly timeout: readonly { readonly rule: string; readonly location: SourceLocation }[];
  readonly related: readonly { readonly surface: string; readonly location: SourceLocation }[];
}

/** Extracts the {@link SurfaceInfo} of one surface declaration. */
export function extractSurface(surface: NamedBlock, spec: ParsedSpec): SurfaceInfo {
  const source = spec.source;
  const loc = (e: Expr): SourceLocation => locationOf(spec, e);
  const binding = (keyword: string): SurfaceBinding | undefined => {
    const value = clausesOf(surface.items, keyword)[0]?.value;
    const typeExpr = value?.a?.kind === 'binary' ? value.a.a : value?.a;
    if (value?.kind !== 'binding' || value.name === undefined || typeExpr?.name === undefined)
      return undefined;
    return { binding: value.name, type: typeExpr.name, location: loc(value) };
  };
  const actor = binding('facing');
  const context = binding('context');
  const provides: ProvidedTrigger[] = [];
  for (const clause of clausesOf(surface.items, 'provides')) {
    walkExpr(clause.value, (e) => {
      const name = calleeName(e);
      if (name === undefined || !/^[A-Z]/.test(name.slice(name.lastIndexOf('/') + 1))) return;
      provides.push({
        name,
        args: kidsOf(e)
          .slice(1)
          .map((arg) => arg.name ?? sourceText(source, arg)),
        location: loc(e),
      });
    });
  }
  return {
    name: surface.name.name,
    location: surface.name.location,
    ...(actor === undefined ? {} : { actor }),
    ...(context === undefined ? {} : { context }),
    provides,
    exposes: clausesOf(surface.items, 'exposes').flatMap((c) =>
      listed(c.value).map((e) => sourceText(source, e)),
    ),
    timeout: namedRefs(surface, 'timeout', loc).map(({ name, location }) => ({ rule: name, location })),
    related: namedRefs(surface, 'related', loc).map(({ name, location }) => ({ surface: name, location })),
  };
}

function listed(value: Expr): readonly Expr[] {
  return value.kind === 'block' ? kidsOf(value) : [value];
}

/** The leading names of `timeout:`/`related:` entries (`Counter(loan.book) when …` → `Counter`). */
function namedRefs(
  surface: NamedBlock,
  keyword: string,
  loc: (e: Expr) => SourceLocation,
): { name: string; location: SourceLocation }[] {
  return clausesOf(surface.items, keyword).flatMap((clause) =>
    listed(clause.value).flatMap((entry) => {
      let head: Expr | undefined = entry.kind === 'binary' && entry.op === 'when' ? entry.a : entry;
      while (head?.kind === 'call' || head?.kind === 'member') head = head.a;
      return head?.kind === 'ident' && head.name !== undefined
        ? [{ name: head.name, location: loc(head) }]
        : [];
    }),
  );
}
