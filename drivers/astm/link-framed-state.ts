// The LIS01-A2 receiver's states (`framing: link`): one union member per phase, each carrying only what means
// something in that phase.
import type { PartialFrame } from './frame-reader.js';
import type { Inbox } from './inbox.js';
import type { LinkCommon } from './link-contract.js';
import type { AcceptedFrame, MessageSoFar } from './link-message.js';

/** LIS01-A2 8.2: waiting for ENQ; everything else is ignored. */
export interface Neutral extends LinkCommon {
  readonly phase: 'neutral';
}

/** Between ENQ and EOT: frames are checked, answered and assembled into messages. */
export interface Receiving extends LinkCommon {
  readonly phase: 'receiving';
  /** Last accepted frame number; null accepts any next number (a capture read from its middle, frames without numbers). */
  readonly lastFrameNumber: number | null;
  /** Last accepted frame's text, to know its retransmission; null before the first frame. */
  readonly lastText: Buffer | null;
  readonly message: MessageSoFar;
  readonly partial: PartialFrame | null;
  /** Frames refused in a row; at MAX_REFUSALS the sender has given up. */
  readonly refusals: number;
}

/** A message is complete; its commit is outstanding and its completing frame not yet answered. */
export interface Committing extends LinkCommon {
  readonly phase: 'committing';
  /** As before the completing frame: what a failed commit returns to. */
  readonly lastFrameNumber: number | null;
  readonly lastText: Buffer | null;
  readonly message: MessageSoFar;
  /** The frame to ACK or NAK on the outcome; null when EOT completed the message (nothing to answer). */
  readonly completing: AcceptedFrame | null;
  /** Bytes after the completing frame, taken up once the outcome is known. */
  readonly inbox: Inbox;
}

/** The sender has given up (or the message outgrew its cap): every frame is NAKed until EOT or ENQ. */
export interface Aborted extends LinkCommon {
  readonly phase: 'aborted';
  readonly partial: PartialFrame | null;
}

/** A message completed at EOT could not be committed: it is held and retried, and ENQ is answered busy. */
export interface Retrying extends LinkCommon {
  readonly phase: 'retrying';
  readonly message: MessageSoFar;
}

/** The LIS01-A2 receiver's states. */
export type FramedState = Neutral | Receiving | Committing | Aborted | Retrying;
