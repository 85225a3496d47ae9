import { describe, expect, it } from 'vitest';
import { parseSpec } from './parse-spec.js';
import { buildInventory, diffInventory, fingerprint } from './inventory.js';

const inventory = (text: string) => buildInventory([parseSpec(`-- allium: 3\n${text}`, 'spec.allium')]);

const BASE = [
  'entity Order {',
  '  status: open | closed',
  '  total: Integer',
  '}',
  'config {',
  '  retries: Integer = 3',
  '}',
  'rule Close {',
  '  when: CloseOrder(order)',
  '  ensures: order.status = closed',
  '}',
  'surface Desk {',
  '  provides: CloseOrder(order)',
  '}',
  'open question "Refunds?"',
  '',
].join('\n');

describe('buildInventory', () => {
  it('lists rules, entities, fields, surfaces, config, questions with stable ids', () => {
    expect(inventory(BASE).constructs.map((c) => c.id)).toEqual([
      'config:retries',
      'entity:Order',
      'field:Order.status',
      'field:Order.total',
      'question:Refunds?',
      'rule:Close',
      'surface:Desk',
    ]);
  });

  it('keeps ids when unrelated lines move and fingerprints when only whitespace or comments change', () => {
    const moved = inventory(
      `\n\n-- a comment\n${BASE.replace('  total: Integer', '  total:   Integer -- note')}`,
    );
    expect(diffInventory(inventory(BASE), moved)).toEqual({ added: [], removed: [], changed: [] });
  });
});

describe('diffInventory', () => {
  it('reports deleted constructs as removed', () => {
    const after = inventory(
      BASE.replace('  total: Integer\n', '').replace(/rule Close \{[\s\S]*?\n\}\n/, ''),
    );
    expect(diffInventory(inventory(BASE), after).removed.map((c) => c.id)).toEqual([
      'field:Order.total',
      'rule:Close',
    ]);
  });

  it('reports a new allium-ignore as an added suppression named after its construct', () => {
    const after = inventory(
      BASE.replace('entity Order {', '-- allium-ignore allium.status.noExit\nentity Order {'),
    );
    const diff = diffInventory(inventory(BASE), after);
    expect(diff.added).toEqual([
      expect.objectContaining({
        id: 'suppression:spec.allium:entity:Order:allium.status.noExit',
        kind: 'suppression',
      }),
    ]);
    expect(diff.removed).toEqual([]);
  });

  it('reports an edited rule as changed', () => {
    const after = inventory(BASE.replace('order.status = closed', 'order.status = open'));
    expect(diffInventory(inventory(BASE), after).changed.map((c) => c.id)).toEqual(['rule:Close']);
  });

  it('fingerprints ignore comments and spacing but not content', () => {
    expect(fingerprint('a:  b -- x')).toBe(fingerprint('a: b'));
    expect(fingerprint('a: b')).not.toBe(fingerprint('a: c'));
  });
});
