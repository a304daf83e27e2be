/**
 * The minimum total cost of assigning rows to columns, each row to at most one column and each column taking at most
 * `capacity` rows, as many rows as can be placed. Solved as a min-cost flow by successive shortest paths
 * (Bellman–Ford over the residual graph): a method independent of the Hungarian one the planning job uses, so that
 * tests and the benchmark can check the job's assignment against it. Meant for a few hundred rows.
 */
export function minCostAssignment(cost: number[][], capacity: number): { total: number; assigned: number } {
  const rows = cost.length;
  const columns = cost[0]?.length ?? 0;
  const source = rows + columns;
  const sink = source + 1;
  const to: number[] = [];
  const cap: number[] = [];
  const price: number[] = [];
  const edges: number[][] = Array.from({ length: sink + 1 }, () => []);
  const link = (from: number, target: number, amount: number, c: number) => {
    edges[from]!.push(to.length);
    to.push(target);
    cap.push(amount);
    price.push(c);
    edges[target]!.push(to.length);
    to.push(from);
    cap.push(0);
    price.push(-c);
  };
  for (let r = 0; r < rows; r++) {
    link(source, r, 1, 0);
    for (let c = 0; c < columns; c++) link(r, rows + c, 1, cost[r]![c]!);
  }
  for (let c = 0; c < columns; c++) link(rows + c, sink, capacity, 0);
  let total = 0;
  let assigned = 0;
  for (;;) {
    const distance = new Array<number>(sink + 1).fill(Number.POSITIVE_INFINITY);
    const via = new Array<number>(sink + 1).fill(-1);
    distance[source] = 0;
    for (let changed = true, pass = 0; changed && pass <= sink; pass++) {
      changed = false;
      for (let node = 0; node <= sink; node++) {
        if (distance[node] === Number.POSITIVE_INFINITY) continue;
        for (const edge of edges[node]!) {
          if (cap[edge]! > 0 && distance[node]! + price[edge]! < distance[to[edge]!]! - 1e-9) {
            distance[to[edge]!] = distance[node]! + price[edge]!;
            via[to[edge]!] = edge;
            changed = true;
          }
        }
      }
    }
    if (distance[sink] === Number.POSITIVE_INFINITY) return { total, assigned };
    for (let node = sink; node !== source; node = to[via[node]! ^ 1]!) {
      cap[via[node]!]! -= 1;
      cap[via[node]! ^ 1]! += 1;
    }
    total += distance[sink]!;
    assigned++;
  }
}
