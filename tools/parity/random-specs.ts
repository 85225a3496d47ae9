/**
 * Writes random specs, built from the language's constructs rather than mutated from text, for the parity tool:
 *
 *   node --conditions=development --import tsx tools/parity/random-specs.ts <out-dir> <count> <seed>
 *   ALLIUM_REF=… node --conditions=development --import tsx tools/parity/parity.ts <out-dir>
 *
 * Each spec is mostly well formed (the mutations of mutate.ts break text; these do not) and draws every name from a
 * small pool, so that what the checks and `analyse` judge comes up densely: entities whose status fields share
 * values, bindings typed only by a status value, transitions declared and not produced, rules fired by calls,
 * state changes, creations and time, conflicting rules, triggers no surface provides, `when` fields, names used and
 * unused, a name declared twice, a type nobody declares, a binding never bound, a config parameter not declared,
 * uniqueness invariants; half the rules walk a declared edge, some behind a guard no rule establishes; and now and
 * then the other declarations (moreConstructs). Over 300 of them, `analyse` gives all six finding types. The same seed writes the same specs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Draws, seeded } from './random.js';

const [out, countText, seedText] = process.argv.slice(2);
if (out === undefined || countText === undefined || seedText === undefined) {
  process.stderr.write('usage: random-specs.ts <out-dir> <count> <seed>\n');
  process.exit(2);
}

const ENTITIES = ['Order', 'Item', 'Ticket', 'Account', 'Shipment', 'Batch'];
const VALUES = ['pending', 'active', 'open', 'closed', 'shipped', 'done', 'cancelled', 'held'];
const TRIGGERS = ['Submit', 'Approve', 'Close', 'Cancel', 'Ship', 'Reopen', 'Expire'];
const FIELDS = ['name', 'total', 'note', 'due_at', 'count', 'flag', 'owner', 'closed_at'];
const CONFIGS = ['limit', 'window', 'max_retries'];

interface Entity {
  name: string;
  values: string[];
  fields: string[];
  edges: [string, string][];
  terminals: string[];
}

/** `count` distinct elements of `list`, in a random order. */
function some<T>(draw: Draws, list: readonly T[], count: number): T[] {
  const rest = [...list];
  const chosen: T[] = [];
  while (chosen.length < count && rest.length > 0)
    chosen.push(rest.splice(draw.below(rest.length), 1)[0] as T);
  return chosen;
}

function entityBlock(draw: Draws, entity: Entity, others: readonly Entity[]): string[] {
  const lines = [`${draw.random() < 0.1 ? 'external ' : ''}entity ${entity.name} {`];
  lines.push(`    status: ${entity.values.join(' | ')}`);
  for (const field of entity.fields) {
    const type = draw.pick([
      'String',
      'Integer',
      'Timestamp',
      'Boolean',
      'Decimal',
      ...others.map((o) => o.name),
    ]);
    const optional = draw.random() < 0.2 ? '?' : '';
    const when =
      draw.random() < 0.25
        ? ` when status = ${some(draw, entity.values, 1 + draw.below(2)).join(' | ')}`
        : '';
    lines.push(`    ${field}: ${type}${optional}${when}`);
  }
  if (others.length > 0 && draw.random() < 0.4) {
    const other = draw.pick(others);
    lines.push(`    ${other.name.toLowerCase()}s: ${other.name} with ${entity.name.toLowerCase()} = this`);
  }
  if (draw.random() < 0.3)
    lines.push(`    is_${draw.pick(entity.values)}: status = ${draw.pick(entity.values)}`);
  if (entity.edges.length > 0 || draw.random() < 0.1) {
    lines.push('', '    transitions status {');
    for (const [from, to] of entity.edges) lines.push(`        ${from} -> ${to}`);
    if (entity.terminals.length > 0) lines.push(`        terminal: ${entity.terminals.join(', ')}`);
    lines.push('    }');
  }
  if (draw.random() < 0.15) lines.push('', `    invariant Positive${entity.name} { this.total >= 0 }`);
  lines.push('}', '');
  return lines;
}

/** A binding's name: mostly the entity's own in lower case (as the reference types it), sometimes another. */
function bindingFor(draw: Draws, entity: Entity): string {
  return draw.random() < 0.8 ? entity.name.toLowerCase() : draw.pick(['x', 'it', 'target', 'thing']);
}

function ruleBlock(draw: Draws, name: string, entities: readonly Entity[]): string[] {
  const entity = draw.pick(entities);
  const x = bindingFor(draw, entity);
  const lines = [`rule ${name} {`];
  const kind = draw.below(6);
  if (kind === 0 || kind === 1)
    lines.push(`    when: ${draw.pick(TRIGGERS)}(${x}${draw.random() < 0.3 ? ', by' : ''})`);
  else if (kind === 2)
    lines.push(`    when: ${x}: ${entity.name}.status transitions_to ${draw.pick(entity.values)}`);
  else if (kind === 3)
    lines.push(`    when: ${x}: ${entity.name}.status becomes ${draw.pick(entity.values)}`);
  else if (kind === 4) lines.push(`    when: ${x}: ${entity.name}.created`);
  else
    lines.push(
      `    when: ${x}: ${entity.name}.${draw.pick(entity.fields.concat(['due_at']))} + ${draw.random() < 0.5 ? `config.${draw.pick(CONFIGS)}` : '2.days'} <= now`,
    );
  // Half the rules walk a declared edge, as real specs do: from its state, to the next, with a guard now and then.
  const edge = entity.edges.length > 0 && draw.random() < 0.5 ? draw.pick(entity.edges) : undefined;
  if (edge !== undefined) {
    lines.push(`    requires: ${x}.status = ${edge[0]}`);
    if (draw.random() < 0.4)
      lines.push(`    requires: ${x}.${draw.pick(entity.fields)} = ${draw.pick(['true', 'done', '"a"'])}`);
    lines.push(`    ensures: ${x}.status = ${edge[1]}`, '}', '');
    return lines;
  }
  const requires = draw.below(3);
  for (let i = 0; i < requires; i += 1) {
    const form = draw.below(4);
    if (form === 0) lines.push(`    requires: ${x}.status = ${draw.pick(entity.values)}`);
    else if (form === 1)
      lines.push(`    requires: ${x}.status in {${some(draw, entity.values, 2).join(', ')}}`);
    else if (form === 2)
      lines.push(
        `    requires: ${x}.${draw.pick(entity.fields.concat(FIELDS))} = ${draw.pick(['true', 'false', '"a"', 'null'])}`,
      );
    else lines.push(`    requires: ${x}.total > config.${draw.pick(CONFIGS)}`);
  }
  const ensures: string[] = [];
  for (let i = 0, n = 1 + draw.below(3); i < n; i += 1) {
    const form = draw.below(6);
    // A status value drawn from any entity now and then: the reference types a binding by a value unique to one.
    const value = draw.random() < 0.85 ? draw.pick(entity.values) : draw.pick(VALUES);
    if (form <= 1) ensures.push(`${x}.status = ${value}`);
    else if (form === 2)
      ensures.push(
        `${x}.${draw.pick(entity.fields.concat(FIELDS))} = ${draw.pick(['now', 'true', '"a"', 'null'])}`,
      );
    else if (form === 3) {
      const made = draw.pick(entities);
      ensures.push(
        `${made.name}.created(status: ${draw.pick(made.values)}, ${draw.pick(made.fields.concat(FIELDS))}: ${x})`,
      );
    } else if (form === 4) ensures.push(`${draw.pick(TRIGGERS)}(${x})`);
    else ensures.push(`if ${x}.flag:\n            ${x}.status = ${value}`);
  }
  if (draw.random() < 0.15) {
    const other = draw.pick(entities);
    lines.push(
      `    for each in ${x}.${other.name.toLowerCase()}s where each.status = ${draw.pick(other.values)}:`,
    );
    lines.push(`        ensures: each.status = ${draw.pick(other.values)}`);
  } else if (ensures.length === 1) lines.push(`    ensures: ${ensures[0]}`);
  else lines.push('    ensures:', ...ensures.map((e) => `        ${e}`));
  lines.push('}', '');
  return lines;
}

const VARIANTS = ['Express', 'Standard', 'Bulk'];

/**
 * The other declarations, each now and then: a sum type (a discriminator naming variants, some undeclared, some
 * lowercase; variants, one extending an entity with no discriminator; creations of the base and of a variant), a
 * `given` block, a default instance, a contract with signatures, a deferred spec, an open question and a named enum
 * as a field's type compared with its values.
 */
function moreConstructs(draw: Draws, entities: readonly Entity[]): string[] {
  const lines: string[] = [];
  const base = draw.pick(entities);
  const lower = base.name.toLowerCase();
  if (draw.random() < 0.3) {
    const named = some(draw, VARIANTS, 1 + draw.below(3));
    const listed = draw.random() < 0.8 ? named : [...named, draw.pick(['Other', 'express', 'pending'])];
    lines.push(
      `entity ${base.name}Kind {`,
      `    kind: ${listed.join(' | ')}`,
      `    ${draw.pick(FIELDS)}: String`,
      '}',
      '',
    );
    for (const variant of named)
      if (draw.random() < 0.85) {
        const extended = draw.random() < 0.9 ? `${base.name}Kind` : base.name;
        lines.push(`variant ${variant} : ${extended} {`, `    ${draw.pick(FIELDS)}: Integer`, '}', '');
      }
    const made = draw.random() < 0.6 ? draw.pick(named) : `${base.name}Kind`;
    lines.push(
      `rule Make${base.name}Kind {`,
      `    when: ${draw.pick(TRIGGERS)}(x)`,
      `    ensures: ${made}.created(${draw.pick(FIELDS)}: x)`,
      '}',
      '',
    );
  }
  if (draw.random() < 0.3)
    lines.push(
      'given {',
      `    ${draw.pick(['viewer', 'current', lower])}: ${draw.pick(entities).name}`,
      '}',
      '',
    );
  if (draw.random() < 0.2)
    lines.push(`default ${base.name} sample = ${base.name}.created(status: ${draw.pick(base.values)})`, '');
  if (draw.random() < 0.3) {
    const parameter = `${draw.pick(['entry', 'Order', 'x'])}: ${draw.pick(entities).name}`;
    lines.push(
      `contract ${draw.pick(['Ledger', 'Mailer'])} {`,
      `    record: (${parameter}) -> ${draw.pick(['String', 'Any', 'Receipt'])}`,
      `    ping: () -> ${draw.pick(['Boolean', 'Timestamp'])}`,
      '}',
      '',
    );
  }
  if (draw.random() < 0.2) lines.push(`deferred ${base.name}.${draw.pick(FIELDS)}`, '');
  if (draw.random() < 0.2) lines.push('open question "Who approves a reopened one?"', '');
  if (draw.random() < 0.3) {
    const values = some(draw, VALUES, 3);
    const grade = `${lower}grade`;
    lines.push(`enum Level { ${values.join(' | ')} }`, '');
    lines.push(
      `entity ${base.name}Grade {`,
      '    level: Level',
      `    status: ${some(draw, VALUES, 2).join(' | ')}`,
      '}',
      '',
    );
    lines.push(
      `rule Grade${draw.below(3)} {`,
      `    when: ${draw.pick(TRIGGERS)}(${grade})`,
      `    requires: ${grade}.level = ${draw.pick([...values, 'unknown'])}`,
      `    ensures: ${grade}.status = ${draw.pick(VALUES)}`,
      '}',
      '',
    );
  }
  return lines;
}

function spec(draw: Draws): string {
  const lines = [draw.random() < 0.95 ? '-- allium: 3' : draw.pick(['-- allium: 2', '-- allium: 1', '']), ''];
  const entities: Entity[] = some(draw, ENTITIES, 1 + draw.below(4)).map((name) => {
    const values = some(draw, VALUES, 2 + draw.below(4));
    const edges: [string, string][] = [];
    if (draw.random() < 0.7)
      for (let i = 0, n = draw.below(values.length + 2); i < n; i += 1) {
        const edge: [string, string] = [draw.pick(values), draw.pick(values)];
        if (edge[0] !== edge[1] && !edges.some(([f, t]) => f === edge[0] && t === edge[1])) edges.push(edge);
      }
    const terminals = edges.length > 0 && draw.random() < 0.8 ? some(draw, values, 1 + draw.below(2)) : [];
    return { name, values, fields: some(draw, FIELDS, 1 + draw.below(4)), edges, terminals };
  });
  if (draw.random() < 0.5) {
    lines.push('config {');
    for (const c of some(draw, CONFIGS, 1 + draw.below(2)))
      lines.push(`    ${c}: ${draw.pick(['Integer = 3', 'Duration = 24.hours', 'Decimal = 0.5'])}`);
    lines.push('}', '');
  }
  if (draw.random() < 0.3) lines.push(`enum Priority { ${some(draw, VALUES, 3).join(' | ')} }`, '');
  for (const entity of entities)
    lines.push(
      ...entityBlock(
        draw,
        entity,
        entities.filter((e) => e !== entity),
      ),
    );
  // Rule names from a small pool too, so a name is now and then declared twice or shared with a trigger.
  for (let i = 0, n = 2 + draw.below(7); i < n; i += 1)
    lines.push(...ruleBlock(draw, draw.random() < 0.2 ? draw.pick(TRIGGERS) : `R${draw.below(9)}`, entities));
  if (draw.random() < 0.3) {
    const entity = draw.pick(entities);
    const key = draw.pick(entity.fields);
    const value = draw.pick(entity.values);
    lines.push(
      `invariant One${value}Per${key} {`,
      `    for a in ${entity.name}s:`,
      `        for b in ${entity.name}s:`,
      `            a != b and a.${key} = b.${key}`,
      `                implies not (a.status = ${value} and b.status = ${value})`,
      '}',
      '',
    );
  }
  // Mistakes a writer makes, now and then: a declaration twice, a type nobody declares, a binding never bound.
  if (draw.random() < 0.15) lines.push(...entityBlock(draw, draw.pick(entities), entities));
  if (draw.random() < 0.15)
    lines.push(`value Money {`, `    amount: ${draw.pick(['Decimal', 'Widget', 'Order'])}`, '}', '');
  if (draw.random() < 0.15) {
    const entity = draw.pick(entities);
    lines.push(
      `rule Stray${draw.below(3)} {`,
      `    when: ${draw.pick(TRIGGERS)}(a)`,
      `    ensures: b.status = ${draw.pick(entity.values)}`,
      '}',
      '',
    );
  }
  lines.push(...moreConstructs(draw, entities));
  if (draw.random() < 0.5)
    lines.push('actor Clerk {', '    identified_by: Account where status = active', '}', '');
  for (let i = 0, n = draw.below(3); i < n; i += 1) {
    const entity = draw.pick(entities);
    const e = entity.name.toLowerCase();
    lines.push(`surface ${entity.name}Desk${i} {`);
    if (draw.random() < 0.5) lines.push('    facing clerk: Clerk');
    lines.push(`    context ${e}: ${entity.name}`);
    lines.push('    exposes:', `        ${e}.status`);
    const provided = some(draw, TRIGGERS, 1 + draw.below(3));
    lines.push(
      '    provides:',
      ...provided.map(
        (t) =>
          `        ${t}(${e})${draw.random() < 0.3 ? ` when ${e}.status = ${draw.pick(entity.values)}` : ''}`,
      ),
    );
    lines.push('}', '');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * With FOLDERS=1, a folder of 2–4 such specs instead of each spec: each file imports some of the others (`use
 * "./f1.allium" as f1`, now and then a path that names no file) and names what they declare through the alias, as
 * a field's type, a rule's trigger, a surface's offer and a creation, where the same names are declared locally too.
 */
function folder(draw: Draws, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const count = 2 + draw.below(3);
  for (let i = 0; i < count; i += 1) {
    const aliases = Array.from({ length: count }, (_, j) => j).filter((j) => j !== i && draw.random() < 0.6);
    const uses = aliases.map((j) => `use "./${draw.random() < 0.1 ? 'missing' : `f${j}`}.allium" as f${j}`);
    const text = spec(draw).split('\n');
    const extra: string[] = [];
    for (const j of aliases) {
      const alias = `f${j}`;
      const entity = draw.pick(ENTITIES);
      const form = draw.below(4);
      if (form === 0) extra.push(`entity Link${j} {`, `    target: ${alias}/${entity}`, '}', '');
      else if (form === 1)
        extra.push(
          `rule From${j} {`,
          `    when: ${alias}/${draw.pick(TRIGGERS)}(x)`,
          '    ensures: x.flag = true',
          '}',
          '',
        );
      else if (form === 2)
        extra.push(
          `surface Offer${j} {`,
          `    context e: ${alias}/${entity}`,
          '    provides:',
          `        ${alias}/${draw.pick(TRIGGERS)}(e)`,
          '}',
          '',
        );
      else
        extra.push(
          `rule Make${j} {`,
          `    when: ${draw.pick(TRIGGERS)}(x)`,
          `    ensures: ${alias}/${entity}.created(status: ${draw.pick(VALUES)})`,
          '}',
          '',
        );
    }
    // The `use` lines go after the version marker.
    writeFileSync(join(dir, `f${i}.allium`), [text[0], ...uses, ...text.slice(1), ...extra].join('\n'));
  }
}

mkdirSync(out, { recursive: true });
const total = Number(countText);
const folders = process.env['FOLDERS'] === '1';
for (let i = 0; i < total; i += 1) {
  const draw = seeded(Number(seedText) * 100_000 + i);
  const name = `r${seedText}-${String(i).padStart(5, '0')}`;
  if (folders) folder(draw, join(out, name));
  else writeFileSync(join(out, `${name}.allium`), spec(draw));
}
console.log(`${total} random ${folders ? 'folders' : 'specs'} in ${out}`);
