import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSpecs } from '@allium-loop/allium';
import { planSlices } from '@allium-loop/decomposer';
import { createLedger, type Ledger, type Question } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { initialLoopState, type LoopState } from '../decide/loop-state.js';
import { syncSliceLedger } from '../driver/ledger-sync.js';
import { mergeSliceLedgers } from './merge-ledgers.js';
import { readLedgerFile, readStoredPlan, writeStoredPlan } from './scale-out-files.js';
import { sliceRunMark, sliceRunRecord } from './slice-run.js';
import { findSlice, githubMatrix, parseStoredPlan, storePlan, type StoredPlan } from './stored-plan.js';

/** Order → Invoice (an invoice is created when an order is), and an unrelated Lamp: two waves, three slices. */
const SHOP = `-- allium: 3

entity Order {
    status: placed | invoiced
}

entity Invoice {
    order: Order
    total: Integer
}

entity Lamp {
    status: off | on
}

rule PlaceOrder {
    when: PlaceOrder(customer)
    ensures: Order.created(status: placed)
}

rule InvoiceOrder {
    when: order: Order.created
    ensures: Invoice.created(order: order, total: 1)
}

rule FixInvoice {
    when: FixInvoice(invoice)
    ensures: invoice.total = 2
}

rule SwitchOn {
    when: SwitchOn(lamp)
    requires: lamp.status = off
    ensures: lamp.status = on
}

rule SwitchOff {
    when: SwitchOff(lamp)
    requires: lamp.status = on
    ensures: lamp.status = off
}

open question "Do lamps dim?"
`;

function shopPlan(): StoredPlan {
  const analysis = analyzeSpecs([{ path: 'shop.allium', text: SHOP }]);
  return storePlan({
    goal: 'shop and lamps',
    base: 'a'.repeat(40),
    specFiles: ['shop.allium'],
    questions: analysis.openQuestions.map((q) => q.text),
    plan: planSlices(analysis.graph),
  });
}

const AT = new Date('2026-11-30T12:00:00.000Z');

function question(text: string, status: Question['status'], tick = 1): Question {
  return {
    id: `q-${text.length.toString(16).padStart(8, '0')}`,
    text,
    classification: 'parked',
    assumption: null,
    answer: status === 'open' ? null : 'yes',
    status,
    raisedAtTick: tick,
    phase: 'propagate',
  };
}

/** The ledger a `run --slice` job leaves: its slice's state as given, spending as given. */
function sliceLedger(
  plan: StoredPlan,
  id: string,
  state: Partial<LoopState>,
  extra: Partial<Ledger> = {},
): Ledger {
  const slice = findSlice(plan, id);
  const record = sliceRunRecord(plan, slice, AT);
  const base: Ledger = {
    ...createLedger({ goal: plan.goal, slug: 'shop-and-lamps', mode: 'spec', now: AT }),
    subGoals: [record.subGoal],
    history: [record.history],
    ...extra,
  };
  return syncSliceLedger(base, slice.id, { ...initialLoopState(), ...state }, AT);
}

const converged = (tick: number, usd: number): Partial<LoopState> => ({
  tick,
  spentUsd: usd,
  terminal: { state: 'converged', reason: 'converged' },
});

function spent(usd: number, calls: number): Ledger['spent'] {
  return {
    ticks: 1,
    wallMs: 1000,
    usd,
    usdUnknownCalls: 0,
    agentCalls: calls,
    tokens: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
  };
}

describe('stored plan and the GitHub matrix', () => {
  it('keeps the waves of the plan, the integration pass last, and prints one wave per matrix', () => {
    const plan = shopPlan();
    expect(plan.slices.map((s) => [s.id, s.wave])).toEqual([
      ['entity-lifecycle:Lamp', 1],
      ['entity-lifecycle:Order', 1],
      ['entity-lifecycle:Invoice', 2],
      ['integration', 3],
    ]);
    expect(plan.waves).toBe(2);
    expect(plan.questions).toEqual(['Do lamps dim?']);
    expect(githubMatrix(plan, 1)).toEqual({
      include: [
        { wave: 1, slice: 'entity-lifecycle:Lamp', key: 'entity-lifecycle-Lamp' },
        { wave: 1, slice: 'entity-lifecycle:Order', key: 'entity-lifecycle-Order' },
      ],
    });
    expect(githubMatrix(plan, 2).include.map((e) => e.slice)).toEqual(['entity-lifecycle:Invoice']);
    // The integration pass is its own job, never a matrix entry; past the last wave the matrix is empty.
    expect(githubMatrix(plan, 3)).toEqual({ include: [] });
    expect(findSlice(plan, 'entity-lifecycle-Order').id).toBe('entity-lifecycle:Order');
    expect(() => findSlice(plan, 'rule:Nope')).toThrow(
      expect.objectContaining({
        message: "The plan has no slice 'rule:Nope'.",
        code: 'scale_out.unknown_slice',
        hint: expect.stringContaining('entity-lifecycle:Lamp, entity-lifecycle:Order') as string,
      }),
    );
  });

  it('round-trips through a file and refuses a bad, foreign or edited one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'stored-plan-'));
    const plan = shopPlan();
    await writeStoredPlan(join(dir, 'plan.json'), plan);
    expect(await readStoredPlan(join(dir, 'plan.json'))).toEqual(plan);
    await expect(readStoredPlan(join(dir, 'missing.json'))).rejects.toMatchObject({
      code: 'scale_out.plan_unreadable',
    });
    expect(() => parseStoredPlan('{ nope', 'p.json')).toThrow(/p\.json is not JSON/);
    expect(() => parseStoredPlan('{"format":"other"}', 'p.json')).toThrow(/not a stored plan: format/);
    const edited = { ...plan, slices: plan.slices.filter((s) => s.id !== 'entity-lifecycle:Lamp') };
    expect(() => parseStoredPlan(JSON.stringify(edited), 'p.json')).toThrow(/was edited/);
  });
});

describe('mergeSliceLedgers', () => {
  it('rolls every slice up in plan order: costs and calls summed, questions deduplicated, converged', () => {
    const plan = shopPlan();
    const ledgers = plan.slices.map((slice, index) =>
      sliceLedger(plan, slice.id, converged(index + 1, 0.25), {
        spent: spent(0.25, 2),
        questions:
          index === 0
            ? [question('Do lamps dim?', 'open'), question('Is an invoice ever voided?', 'open', 2)]
            : index === 1
              ? [question('is an invoice ever VOIDED', 'answered')]
              : [],
      }),
    );
    // Given in any order: the merge follows the plan.
    const merged = mergeSliceLedgers(
      plan,
      [...ledgers].reverse().map((ledger, i) => ({ source: `l${String(i)}.json`, ledger })),
      AT,
    );
    expect(merged.ledger.subGoals.map((g) => [g.id, g.status])).toEqual(
      plan.slices.map((s) => [s.id, 'converged']),
    );
    expect(merged.ledger.spent).toMatchObject({ usd: 1, agentCalls: 8, wallMs: 4000 });
    expect(merged.ledger.spent.tokens.input).toBe(40);
    expect(merged.ledger.terminal?.state).toBe('converged');
    expect(merged.rollUp.converged).toBe(true);
    expect(merged.rollUp.totals).toMatchObject({ slices: 4, converged: 4, costUsd: 1 });
    // One question per text: the answered one wins over the open copy; the spec's question is not repeated.
    expect(merged.ledger.questions.map((q) => [q.text, q.status])).toEqual([
      ['Do lamps dim?', 'open'],
      ['is an invoice ever VOIDED', 'answered'],
    ]);
    expect(merged.rollUp.parkedQuestions.map((q) => q.text)).toEqual(['Do lamps dim?']);
    expect(merged.slices.every((s) => s.condition === 'ended')).toBe(true);
    // The merged ledger is no slice run of its own (resume would otherwise take it for one).
    expect(sliceRunMark(merged.ledger)).toBeUndefined();
  });

  it("keeps each slice's state honest: stopped, interrupted and missing slices, and the spec's questions", () => {
    const plan = shopPlan();
    const lamp = sliceLedger(plan, 'entity-lifecycle:Lamp', converged(1, 0.1));
    const order = sliceLedger(plan, 'entity-lifecycle:Order', {
      tick: 3,
      spentUsd: 0.3,
      terminal: { state: 'no_progress', reason: 'no progress for 2 ticks' },
    });
    const invoice = sliceLedger(plan, 'entity-lifecycle:Invoice', { tick: 1, spentUsd: 0.05 });
    const merged = mergeSliceLedgers(
      plan,
      [
        { source: 'lamp.json', ledger: lamp },
        { source: 'order.json', ledger: order },
        { source: 'invoice.json', ledger: invoice },
      ],
      AT,
    );
    expect(merged.slices).toEqual([
      { id: 'entity-lifecycle:Lamp', source: 'lamp.json', condition: 'ended' },
      { id: 'entity-lifecycle:Order', source: 'order.json', condition: 'ended' },
      { id: 'entity-lifecycle:Invoice', source: 'invoice.json', condition: 'interrupted' },
      { id: 'integration', condition: 'missing' },
    ]);
    expect(merged.rollUp.slices.map((s) => s.status)).toEqual([
      'converged',
      'no_progress',
      'running',
      'pending',
    ]);
    expect(merged.rollUp.status).toBe('stopped');
    expect(merged.ledger.terminal).toMatchObject({
      state: 'no_progress',
      detail: 'slice entity-lifecycle:Order: no progress for 2 ticks',
    });
    expect(merged.ledger.questions.map((q) => [q.text, q.classification, q.phase])).toEqual([
      ['Do lamps dim?', 'parked', 'plan'],
    ]);
    // Only interrupted and missing slices: in progress, not ended.
    const partial = mergeSliceLedgers(plan, [{ source: 'invoice.json', ledger: invoice }], AT);
    expect(partial.rollUp.status).toBe('in_progress');
    expect(partial.ledger.status).toBe('running');
    expect(partial.ledger.terminal).toBeNull();
  });

  it('refuses bad input with a clear error: no ledgers, a run that is no slice, another plan, a slice twice', () => {
    const plan = shopPlan();
    const lamp = sliceLedger(plan, 'entity-lifecycle:Lamp', converged(1, 0.1));
    expect(() => mergeSliceLedgers(plan, [], AT)).toThrow(/No slice ledgers/);
    const plain = createLedger({ goal: plan.goal, slug: 'shop-and-lamps', mode: 'spec', now: AT });
    expect(() => mergeSliceLedgers(plan, [{ source: 'plain.json', ledger: plain }], AT)).toThrow(
      /plain\.json is not the ledger of a slice run/,
    );
    const other = { ...plan, id: '0123456789abcdef' };
    const foreign = sliceLedger(other, 'entity-lifecycle:Lamp', converged(1, 0.1));
    expect(() => mergeSliceLedgers(plan, [{ source: 'f.json', ledger: foreign }], AT)).toThrow(
      /f\.json ran slice entity-lifecycle:Lamp of plan 0123456789abcdef/,
    );
    expect(() =>
      mergeSliceLedgers(
        plan,
        [
          { source: 'a.json', ledger: lamp },
          { source: 'b.json', ledger: lamp },
        ],
        AT,
      ),
    ).toThrow(/Two ledgers for slice entity-lifecycle:Lamp: a\.json and b\.json/);
  });

  it('reads ledger files and names a bad one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'merge-ledgers-'));
    const plan = shopPlan();
    const path = join(dir, 'lamp.json');
    const ledger = sliceLedger(plan, 'entity-lifecycle:Lamp', converged(1, 0.1));
    await writeFile(path, JSON.stringify(ledger));
    expect(sliceRunMark(await readLedgerFile(path))?.slice.id).toBe('entity-lifecycle:Lamp');
    await writeFile(join(dir, 'bad.json'), '{"schemaVersion": 1, "goal": ""}');
    await expect(readLedgerFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json is not a ledger: /);
    await writeFile(join(dir, 'torn.json'), '{"schemaVersion": 1,');
    await expect(readLedgerFile(join(dir, 'torn.json'))).rejects.toThrow(
      /torn\.json is not a ledger: not JSON/,
    );
    // Reading never changes a file.
    expect(await readFile(join(dir, 'torn.json'), 'utf8')).toBe('{"schemaVersion": 1,');
  });
});

describe('the shared fixtures, planned for scale-out', () => {
  const fixture = (name: string) =>
    readFile(new URL(`../../../allium/src/fixtures/${name}.allium`, import.meta.url), 'utf8');

  it.each([
    ['v3-lifecycle', 2, 1, 6, 2, 'surface:OrderDashboard', 'entity-lifecycle:Order'],
    ['language-reference-constructs', 5, 1, 23, 2, 'surface:DocumentManager', 'entity-lifecycle:Document'],
  ])(
    '%s: %i slices in %i wave(s); kept apart, %i slices in %i waves with the surface after its entity',
    async (name, slices, waves, rawSlices, rawWaves, surface, entity) => {
      const graph = analyzeSpecs([{ path: `${name}.allium`, text: await fixture(name) }]).graph;
      const plan = storePlan({
        goal: name,
        base: null,
        specFiles: [],
        questions: [],
        plan: planSlices(graph),
      });
      expect(plan.slices.filter((s) => s.id !== 'integration')).toHaveLength(slices);
      expect(plan.waves).toBe(waves);
      const raw = planSlices(graph, undefined, { mergeSmallSlices: false });
      expect([raw.slices.length, raw.waves.length]).toEqual([rawSlices, rawWaves]);
      const wave = (id: string) => raw.slices.find((s) => s.id === id)!.wave;
      expect(wave(surface)).toBeGreaterThan(wave(entity));
    },
  );
});
