// The order groups of the three result messages the driver reads, each result (OBX) with the segments around it
// that a field location may name:
// - ORU^R01 (v2.5.1 Chapter 7, 7.3.1): {PID ... {[ORC] OBR {NTE} {[OBX {NTE}]} {[SPM {[OBX]}]}}}. An OBX after an SPM
//   describes the specimen (SPECIMEN group) and is not an order's result.
// - OUL^R21 (7.3.5, unsolicited laboratory observation): [PID [PV1]] {[SAC [SID]] [ORC] OBR ... {[OBX ...]}}: the
//   container (SAC) comes before its order, as laboratory middleware sends it.
// - OUL^R22 (7.3.6, specimen oriented, IHE LAW): [PID] {SPM {[OBX]} {[SAC]} {OBR [ORC] ... {[OBX ...]}}}: the specimen
//   comes first, its own OBX describe it, and the ORC follows its OBR.
import type { Segment } from './parse.js';

/** The message structures whose results the driver reads. */
export type ResultStructure = 'ORU_R01' | 'OUL_R21' | 'OUL_R22';

/** One order's results and the segments around them. `obr` is undefined for result rows sent before any OBR. */
export interface OrderGroup {
  obr?: Segment;
  observations: Segment[];
  /** The first segment of each id in this group's scope: its OBR, ORC, SPM, SAC and the patient's PID, PV1. */
  context: Map<string, Segment>;
}

interface Walk {
  structure: ResultStructure;
  groups: OrderGroup[];
  current: OrderGroup | undefined;
  /** Segments that hold for every later group until the next patient (PID, PV1; in OUL^R22 the specimen too). */
  inherited: Map<string, Segment>;
  /** Segments that belong to the next OBR (an ORC or SAC sent before it). */
  pending: Map<string, Segment>;
  /** OBX seen now describe a specimen, not an order. */
  specimenObservations: boolean;
}

/** Groups a message's result segments by OBR, in the structure's order. */
export function orderGroups(segments: readonly Segment[], structure: ResultStructure = 'ORU_R01'): OrderGroup[] {
  const w: Walk = { structure, groups: [], current: undefined, inherited: new Map(), pending: new Map(), specimenObservations: false };
  for (const seg of segments.slice(1)) step(w, seg);
  return w.groups;
}

function step(w: Walk, seg: Segment): void {
  switch (seg.id) {
    case 'PID':
      [w.inherited, w.pending, w.current, w.specimenObservations] = [new Map([['PID', seg]]), new Map(), undefined, false];
      return;
    case 'OBR':
      w.current = open(w, seg);
      w.specimenObservations = false;
      return;
    case 'ORC':
      // OUL^R22 sends the ORC after its OBR; the other structures before it.
      if (w.structure === 'OUL_R22' && w.current?.obr !== undefined && !w.current.context.has('ORC')) w.current.context.set('ORC', seg);
      else w.pending.set('ORC', seg);
      return;
    case 'SPM':
      return specimen(w, seg);
    case 'SAC':
      if (w.structure === 'OUL_R22') firstOf(w.inherited, seg);
      else w.pending.set('SAC', seg);
      return;
    case 'OBX':
      if (w.specimenObservations) return;
      w.current ??= open(w, undefined);
      w.current.observations.push(seg);
      return;
    default:
      firstOf(w.current?.context ?? w.inherited, seg);
  }
}

// OUL^R22: a specimen opens a new scope for the orders after it; elsewhere it belongs to the order before it.
function specimen(w: Walk, seg: Segment): void {
  w.specimenObservations = true;
  if (w.structure === 'OUL_R22') {
    w.inherited.delete('SAC');
    w.inherited.set('SPM', seg);
    w.current = undefined;
  } else if (w.current !== undefined) firstOf(w.current.context, seg);
}

function open(w: Walk, obr: Segment | undefined): OrderGroup {
  const context = new Map([...w.inherited, ...w.pending]);
  if (obr !== undefined) context.set('OBR', obr);
  w.pending = new Map();
  const group: OrderGroup = { observations: [], context, ...(obr ? { obr } : {}) };
  w.groups.push(group);
  return group;
}

function firstOf(scope: Map<string, Segment>, seg: Segment): void {
  if (!scope.has(seg.id)) scope.set(seg.id, seg);
}

/** The segment a field location names for one result: the OBX itself, the message's MSH, or one of its group's. */
export function segmentFor(id: string, group: OrderGroup, obx: Segment | undefined, msh: Segment): Segment | undefined {
  if (id === 'OBX') return obx;
  if (id === 'MSH') return msh;
  return group.context.get(id);
}
