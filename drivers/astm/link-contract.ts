// What the ASTM receiver's state machine takes and gives, shared by its two framings (link-framed.ts, link-bare.ts)
// and the dispatcher over them (link.ts).
import type { DriverEvent } from '../../src/runner-contract.js';
import type { AstmOptions, LinkDeviations } from './options.js';

/** What the link layer needs from the instrument's options. */
export type LinkConfig = Pick<AstmOptions, 'framing' | 'maxFrameBytes'> & { deviations: LinkDeviations };

/** Events the link layer reports (a subset of the runner's DriverEvents). */
export type LinkEvent = Extract<DriverEvent, { kind: 'nak' | 'checksum-error' | 'discarded' }>;

export type LinkInput = { kind: 'bytes'; data: Buffer } | { kind: 'timeout' } | { kind: 'committed'; ok: boolean } | { kind: 'accepting'; accepting: boolean };

export type LinkEffect =
  | { kind: 'write'; data: Buffer }
  | { kind: 'arm-timer'; ms: number }
  | { kind: 'cancel-timer' }
  /** `raw`: the message's bytes as received (journaled); `text`: the reassembled frame texts. */
  | { kind: 'commit'; raw: Buffer; text: Buffer }
  | { kind: 'event'; event: LinkEvent }
  /** Bytes outside any frame (other than line ends), ignored; `labgate decode` reports them. */
  | { kind: 'noise'; bytes: number };

/** What every receiver state knows, whatever its framing. */
export interface LinkCommon {
  readonly config: LinkConfig;
  /** False while the store cannot accept: ENQ is answered NAK (busy); a bare message waits. */
  readonly accepting: boolean;
}

/** One transition's outcome: the next state and what the runner must do. */
export type Step<S> = { state: S; effects: LinkEffect[] };
