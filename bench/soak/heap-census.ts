// What a V8 heap snapshot (the .heapsnapshot JSON that --heapsnapshot-signal or v8.writeHeapSnapshot writes) holds,
// counted for the soak's question "what grows": objects by kind and constructor, and, since V8 keeps an object's id
// across the snapshots of one process, the objects found in both whose outgoing references grew (a Map, an array or
// a closure's context that keeps collecting), each with the chain of what holds it. Pure: takes the parsed JSON.

/** The parts of the snapshot format this reads (v8/include/v8-profiler.h, HeapSnapshotJSONSerializer). */
export interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** One kind of object: how many and their own bytes. */
export interface CensusLine {
  kind: string;
  count: number;
  bytes: number;
}

/** An object in both snapshots whose outgoing references grew. */
export interface GrowingObject {
  id: number;
  kind: string;
  /** References (references()) in the first snapshot and in the second. */
  refsBefore: number;
  refsAfter: number;
  bytesBefore: number;
  bytesAfter: number;
  /** What holds it, nearest first, as `edge-name ← holder-kind`. */
  heldBy: string[];
}

// Kinds whose node names are their contents (a string's text, a number): counted by type alone.
const BY_TYPE_ALONE = new Set(['string', 'concatenated string', 'sliced string', 'number', 'bigint', 'code', 'symbol']);

/** The snapshot with its flat arrays read into nodes. */
export class HeapSnapshot {
  readonly nodeCount: number;
  private readonly nodeFieldCount: number;
  private readonly edgeFieldCount: number;
  private readonly f: { type: number; name: number; id: number; size: number; edges: number };
  private readonly e: { type: number; name: number; to: number };
  private readonly firstEdge: Uint32Array;

  constructor(private readonly json: HeapSnapshotJson) {
    const meta = json.snapshot.meta;
    const field = (list: string[], name: string): number => {
      const at = list.indexOf(name);
      if (at < 0) throw new Error(`not a V8 heap snapshot: no ${name} field`);
      return at;
    };
    this.nodeFieldCount = meta.node_fields.length;
    this.edgeFieldCount = meta.edge_fields.length;
    this.f = {
      type: field(meta.node_fields, 'type'),
      name: field(meta.node_fields, 'name'),
      id: field(meta.node_fields, 'id'),
      size: field(meta.node_fields, 'self_size'),
      edges: field(meta.node_fields, 'edge_count'),
    };
    this.e = { type: field(meta.edge_fields, 'type'), name: field(meta.edge_fields, 'name_or_index'), to: field(meta.edge_fields, 'to_node') };
    this.nodeCount = json.nodes.length / this.nodeFieldCount;
    this.firstEdge = new Uint32Array(this.nodeCount + 1);
    for (let n = 0; n < this.nodeCount; n++) this.firstEdge[n + 1] = this.firstEdge[n]! + this.edgeCount(n) * this.edgeFieldCount;
  }

  /** The object's kind: its type, and for objects, closures and internals its constructor or name. */
  kind(n: number): string {
    const type = this.json.snapshot.meta.node_types[0][this.field(n, this.f.type)]!;
    if (BY_TYPE_ALONE.has(type)) return `(${type})`;
    return `${type} ${this.json.strings[this.field(n, this.f.name)]}`;
  }

  id(n: number): number {
    return this.field(n, this.f.id);
  }

  bytes(n: number): number {
    return this.field(n, this.f.size);
  }

  edgeCount(n: number): number {
    return this.field(n, this.f.edges);
  }

  /**
   * What the object refers to: its own edges and those of the backing arrays it holds internally (a Map's or Set's
   * table, an object's out-of-line properties), which V8 replaces with a new array, under a new id, as they grow.
   */
  references(n: number): number {
    const types = this.json.snapshot.meta.edge_types[0];
    const internal = types.indexOf('internal');
    const array = this.json.snapshot.meta.node_types[0].indexOf('array');
    let count = this.edgeCount(n);
    for (let at = this.firstEdge[n]!; at < this.firstEdge[n + 1]!; at += this.edgeFieldCount) {
      if (this.json.edges[at + this.e.type] !== internal) continue;
      const to = this.json.edges[at + this.e.to]! / this.nodeFieldCount;
      if (this.field(to, this.f.type) === array) count += this.edgeCount(to);
    }
    return count;
  }

  /** Objects by kind, largest own bytes first. */
  census(): CensusLine[] {
    const byKind = new Map<string, CensusLine>();
    for (let n = 0; n < this.nodeCount; n++) {
      const kind = this.kind(n);
      const line = byKind.get(kind) ?? { kind, count: 0, bytes: 0 };
      line.count++;
      line.bytes += this.bytes(n);
      byKind.set(kind, line);
    }
    return [...byKind.values()].sort((a, b) => b.bytes - a.bytes);
  }

  /** Node index by object id. */
  indexById(): Map<number, number> {
    const byId = new Map<number, number>();
    for (let n = 0; n < this.nodeCount; n++) byId.set(this.id(n), n);
    return byId;
  }

  /** For each of `targets` (node indexes), its first strong holder: [holder node, edge name]. */
  holders(targets: ReadonlySet<number>): Map<number, [number, string]> {
    const weak = this.json.snapshot.meta.edge_types[0].indexOf('weak');
    const types = this.json.snapshot.meta.edge_types[0];
    const found = new Map<number, [number, string]>();
    for (let n = 0; n < this.nodeCount; n++) {
      for (let at = this.firstEdge[n]!; at < this.firstEdge[n + 1]!; at += this.edgeFieldCount) {
        const type = this.json.edges[at + this.e.type]!;
        if (type === weak) continue;
        const to = this.json.edges[at + this.e.to]! / this.nodeFieldCount;
        if (!targets.has(to) || found.has(to)) continue;
        const nameOrIndex = this.json.edges[at + this.e.name]!;
        const typeName = types[type]!;
        found.set(to, [n, typeName === 'element' || typeName === 'hidden' ? `[${nameOrIndex}]` : this.json.strings[nameOrIndex]!]);
      }
    }
    return found;
  }

  private field(n: number, f: number): number {
    return this.json.nodes[n * this.nodeFieldCount + f]!;
  }
}

/** The census lines whose count or bytes changed from `before` to `after`, the largest growth in bytes first. */
export function censusGrowth(before: readonly CensusLine[], after: readonly CensusLine[]): (CensusLine & { countDelta: number; bytesDelta: number })[] {
  const was = new Map(before.map((l) => [l.kind, l]));
  const kinds = new Set([...before.map((l) => l.kind), ...after.map((l) => l.kind)]);
  const now = new Map(after.map((l) => [l.kind, l]));
  return [...kinds]
    .map((kind) => {
      const a = was.get(kind) ?? { kind, count: 0, bytes: 0 };
      const b = now.get(kind) ?? { kind, count: 0, bytes: 0 };
      return { kind, count: b.count, bytes: b.bytes, countDelta: b.count - a.count, bytesDelta: b.bytes - a.bytes };
    })
    .filter((l) => l.countDelta !== 0 || l.bytesDelta !== 0)
    .sort((x, y) => y.bytesDelta - x.bytesDelta);
}

/** Objects present in both snapshots whose outgoing references grew by at least `minGrowth`, the most first. */
export function growingObjects(before: HeapSnapshot, after: HeapSnapshot, minGrowth: number, limit: number, depth = 6): GrowingObject[] {
  const was = before.indexById();
  const grown: { n: number; was: number; by: number }[] = [];
  for (let n = 0; n < after.nodeCount; n++) {
    const m = was.get(after.id(n));
    if (m === undefined) continue;
    const by = after.references(n) - before.references(m);
    if (by >= minGrowth) grown.push({ n, was: m, by });
  }
  grown.sort((x, y) => y.by - x.by);
  const top = grown.slice(0, limit);
  // Walk each one's holders up to `depth` levels, one pass over the edges per level.
  const chains = new Map<number, string[]>(top.map((g) => [g.n, []]));
  let frontier = new Map<number, number[]>(top.map((g) => [g.n, [g.n]]));
  for (let level = 0; level < depth && frontier.size > 0; level++) {
    const found = after.holders(new Set(frontier.keys()));
    const next = new Map<number, number[]>();
    for (const [at, origins] of frontier) {
      const holder = found.get(at);
      if (!holder) continue;
      for (const origin of origins) chains.get(origin)!.push(`${holder[1]} ← ${after.kind(holder[0])}`);
      next.set(holder[0], [...(next.get(holder[0]) ?? []), ...origins]);
    }
    frontier = next;
  }
  return top.map(({ n, was: m }) => ({
    id: after.id(n),
    kind: after.kind(n),
    refsBefore: before.references(m),
    refsAfter: after.references(n),
    bytesBefore: before.bytes(m),
    bytesAfter: after.bytes(n),
    heldBy: chains.get(n)!,
  }));
}
