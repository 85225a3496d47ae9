import type { DependencyGraph, GraphEdge, GraphNode } from '@allium-loop/allium';
import type { PhaseContext } from './phase-context.js';
import type { SliceSelection } from './select-slice-excerpt.js';
import type { SpecSource } from './worker-ports.js';

/** A small hand-written spec: a tool library where members borrow drills. */
export const TOOL_LIBRARY_SPEC = `-- allium: 3
-- Scope: tool library lending (test fixture)

external entity Member {
    name: String
}

enum Condition { good | worn }

-- A tool on the shelf or out with a member.
entity Tool {
    label: String
    condition: Condition
    status: shelved | out
}

entity Borrowing {
    tool: Tool
    member: Member
    due_at: Timestamp
    status: open | closed
}

config {
    borrow_period: Duration = 7.days
}

rule Borrow {
    when: BorrowRequested(member, tool)
    requires: tool.status = shelved
    ensures:
        tool.status = out
        Borrowing.created(tool: tool, member: member, due_at: now + config.borrow_period, status: open)
}

rule GiveBack {
    when: GiveBackRequested(borrowing)
    requires: borrowing.status = open
    ensures:
        borrowing.status = closed
        borrowing.tool.status = shelved
}

surface Desk {
    facing member: Member
    context tool: Tool
    provides:
        BorrowRequested(member, tool)
        GiveBackRequested(borrowing)
}

open question "May a worn tool be lent?"
`;

function node(kind: GraphNode['kind'], name: string, line: number): GraphNode {
  return { id: `${kind}:${name}`, kind, name, location: { file: 'spec/library.allium', line, col: 1 } };
}

function edge(from: string, to: string, kind: GraphEdge['kind'], via: string): GraphEdge {
  const at = { file: 'spec/library.allium', line: 1, col: 1 };
  return { from, to, kind, via, evidence: { from: at, to: at } };
}

/** A hand-built dependency graph for a generated spec of `n` independent chains (surface → rule → entity). */
export function chainSpec(n: number): {
  sources: SpecSource[];
  graph: DependencyGraph;
  slices: SliceSelection[];
} {
  const blocks: string[] = ['-- allium: 3', '-- Scope: generated chains (test fixture)', ''];
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const slices: SliceSelection[] = [];
  for (let i = 0; i < n; i += 1) {
    blocks.push(
      `entity Thing${i} {\n    label: String\n    size: Size${i}\n    status: fresh | done\n}\n`,
      `enum Size${i} { small | large }\n`,
      `rule Finish${i} {\n    when: FinishRequested${i}(thing)\n    requires: thing.status = fresh\n    ensures:\n        thing.status = done\n        Finished${i}(thing: thing)\n}\n`,
      `rule Announce${i} {\n    when: Finished${i}(thing)\n    ensures: Note${i}.created(thing: thing)\n}\n`,
      `entity Note${i} {\n    thing: Thing${i}\n}\n`,
      `surface Panel${i} {\n    context thing: Thing${i}\n    provides:\n        FinishRequested${i}(thing)\n}\n`,
    );
    nodes.push(
      node('entity', `Thing${i}`, 1),
      node('rule', `Finish${i}`, 1),
      node('rule', `Announce${i}`, 1),
      node('entity', `Note${i}`, 1),
      node('surface', `Panel${i}`, 1),
    );
    edges.push(
      edge(`surface:Panel${i}`, `rule:Finish${i}`, 'trigger', `FinishRequested${i}`),
      edge(`rule:Finish${i}`, `entity:Thing${i}`, 'writes', `Thing${i}.status`),
      edge(`rule:Finish${i}`, `rule:Announce${i}`, 'trigger', `Finished${i}`),
      edge(`rule:Announce${i}`, `entity:Note${i}`, 'creates', `Note${i}`),
    );
    slices.push({ name: `chain ${i}`, constructs: [`rule:Finish${i}`] });
  }
  blocks.push('config {\n    batch: Integer = 10\n}\n');
  return {
    sources: [{ path: 'spec/chains.allium', text: blocks.join('\n') }],
    graph: { nodes, edges },
    slices,
  };
}

/** A phase context with every optional part filled, for prompt tests. */
export function sampleContext(overrides: Partial<PhaseContext> = {}): PhaseContext {
  return {
    cwd: '/project',
    slug: 'tool-library',
    tick: 3,
    goal: 'Let members borrow and return tools',
    mode: 'spec-first',
    paths: { spec: ['spec/library.allium'], tests: ['test/borrow.test.ts'], code: ['src/library.ts'] },
    previousVerdict: {
      failingTests: [{ name: 'Borrow: marks the tool out', message: 'expected "out", received "shelved"' }],
      divergences: [
        {
          construct: 'rule:GiveBack',
          classification: 'code-bug',
          description: 'the code never puts the tool back on the shelf',
        },
      ],
      structuralErrors: [{ file: 'spec/library.allium', line: 40, message: 'undefined binding borrowing' }],
    },
    parkedQuestions: [{ text: 'May a worn tool be lent?', assumption: 'yes, worn tools are lent' }],
    tendRequest: {
      request: 'Drop the condition field; nobody records it.',
      removals: ['field:Tool.condition'],
    },
    timeoutMs: 60_000,
    ...overrides,
  };
}
