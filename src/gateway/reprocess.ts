// Reprocessing a rejected capture after the configuration was fixed (ARCHITECTURE.md invariant 2): the raw bytes
// are decoded again with the instrument's current driver and mapping, exactly as `labgate decode` would.
import type { BoundInstrument } from '../driver-registry.js';
import { LabgateError } from '../errors.js';
import type { DecodedMessage } from '../message.js';
import type { IngestSummary } from '../message.js';
import type { Store } from '../store/store.js';

/** Decodes capture `id` again and re-ingests it under the same rules; throws USAGE when it cannot. */
export function reprocessCapture(store: Store, instruments: ReadonlyMap<string, BoundInstrument>, id: number, actor: string): IngestSummary {
  const capture = store.capture(id);
  const raw = store.captureRaw(id);
  if (!capture || !raw) throw new LabgateError('USAGE', `no capture ${id}`);
  const instrument = instruments.get(capture.instrumentId);
  if (!instrument) throw new LabgateError('USAGE', `capture ${id} came from instrument '${capture.instrumentId}', which is not configured now`);
  if (instrument.driver.protocol !== capture.protocol) {
    throw new LabgateError('USAGE', `capture ${id} is ${capture.protocol} but instrument '${capture.instrumentId}' now uses ${instrument.driver.protocol}`);
  }
  const decoded = instrument.driver.decodeJournaled(raw, instrument.profile);
  const merged: DecodedMessage = {
    results: decoded.flatMap((m) => m.results),
    rejections: decoded.flatMap((m) => m.rejections),
  };
  return store.reprocess(id, merged, actor);
}
