interface Frame {
  readonly id: string;
  readonly next: readonly string[];
  position: number;
}

/**
 * The strongly connected components of a directed graph (Tarjan's algorithm, iterative so deep chains cannot
 * overflow the stack). Each component lists its ids in ascending order; components come out sorted by their first
 * id. `successors` must only name ids from `ids`.
 */
export function stronglyConnected(
  ids: readonly string[],
  successors: (id: string) => readonly string[],
): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (root: string) => {
    const frames: Frame[] = [open(root)];
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const next = frame.next[frame.position];
      frame.position += 1;
      if (next === undefined) {
        frames.pop();
        close(frame.id, frames[frames.length - 1]?.id);
      } else if (!order.has(next)) frames.push(open(next));
      else if (onStack.has(next)) low.set(frame.id, Math.min(low.get(frame.id)!, order.get(next)!));
    }
  };
  const open = (id: string): Frame => {
    order.set(id, order.size);
    low.set(id, order.get(id)!);
    stack.push(id);
    onStack.add(id);
    return { id, next: successors(id), position: 0 };
  };
  const close = (id: string, parent: string | undefined) => {
    if (parent !== undefined) low.set(parent, Math.min(low.get(parent)!, low.get(id)!));
    if (low.get(id) !== order.get(id)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== id);
    components.push(component.sort());
  };
  for (const id of ids) if (!order.has(id)) visit(id);
  return components.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
