// The ORDER_OBSERVATION groups of an ORU^R01 (HL7 v2.5.1 Chapter 7, 7.3.1):
// [ORC] OBR {NTE} {[OBX {NTE}]} ... {[SPM {[OBX]}]}. An OBX after an SPM describes the specimen
// (7.3.1, SPECIMEN group) and is not an order's result.
import type { Segment } from './parse.js';

/** One order's segments. `obr` is undefined for result rows sent before any OBR. */
export interface OrderGroup {
  orc?: Segment;
  obr?: Segment;
  observations: Segment[];
  specimens: Segment[];
}

/** Groups a message's segments by OBR. */
export function orderGroups(segments: readonly Segment[]): OrderGroup[] {
  const groups: OrderGroup[] = [];
  let current: OrderGroup | undefined;
  let pendingOrc: Segment | undefined;
  let inSpecimen = false;
  for (const seg of segments) {
    if (seg.id === 'ORC') {
      pendingOrc = seg;
    } else if (seg.id === 'OBR') {
      current = { obr: seg, observations: [], specimens: [] };
      if (pendingOrc) current.orc = pendingOrc;
      pendingOrc = undefined;
      inSpecimen = false;
      groups.push(current);
    } else if (seg.id === 'SPM' && current) {
      current.specimens.push(seg);
      inSpecimen = true;
    } else if (seg.id === 'OBX' && !inSpecimen) {
      if (!current) {
        current = { observations: [], specimens: [] };
        groups.push(current);
      }
      current.observations.push(seg);
    }
  }
  return groups;
}

/** The segment a field reference names, within one group (MSH from the message). */
export function segmentFor(id: string, group: OrderGroup, obx: Segment | undefined, msh: Segment): Segment | undefined {
  switch (id) {
    case 'OBX':
      return obx;
    case 'OBR':
      return group.obr;
    case 'ORC':
      return group.orc;
    case 'SPM':
      return group.specimens[0];
    case 'MSH':
      return msh;
    default:
      return undefined;
  }
}
