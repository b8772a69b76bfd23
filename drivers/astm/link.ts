// The receiver's side of the LIS01-A2 link layer as a pure state machine: bytes, timer expiries, commit
// outcomes and the store's readiness come in as inputs; writes, timers, commits and events go out as effects.
// Durable before ACK (ARCHITECTURE.md invariant 1): the frame that completes a message (the ETX frame whose
// text ends with the L terminator record) is answered only after the runner reports the commit.
// The state is one union member per phase, each carrying only what means something in that phase.
import type { DriverEvent } from '../../src/runner-contract.js';
import { driveMachine } from './drive.js';
import { bareStep, initialBareState, bareHeldBytes, type BareState } from './link-bare.js';
import { framedStep } from './link-framed.js';
import type { AcceptedFrame, MessageSoFar } from './link-message.js';
import { newMessage } from './link-message.js';
import type { PartialFrame } from './frame-reader.js';
import type { Inbox } from './inbox.js';
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

interface Common {
  readonly config: LinkConfig;
  /** False while the store cannot accept: ENQ is answered NAK (busy). */
  readonly accepting: boolean;
}

/** LIS01-A2 8.2: waiting for ENQ; everything else is ignored. */
export interface Neutral extends Common {
  readonly phase: 'neutral';
}

/** Between ENQ and EOT: frames are checked, answered and assembled into messages. */
export interface Receiving extends Common {
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
export interface Committing extends Common {
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
export interface Aborted extends Common {
  readonly phase: 'aborted';
  readonly partial: PartialFrame | null;
}

/** A message completed at EOT could not be committed: it is held and retried, and ENQ is answered busy. */
export interface Retrying extends Common {
  readonly phase: 'retrying';
  readonly message: MessageSoFar;
}

/** The LIS01-A2 receiver's states. */
export type FramedState = Neutral | Receiving | Committing | Aborted | Retrying;

/** The receiver's state: LIS01-A2 framing, or bare records (`framing: none`). */
export type LinkState = FramedState | BareState;

export type StepResult = { state: LinkState; effects: LinkEffect[] };

/** The state a receiver starts in: neutral (LIS01-A2 8.2), or collecting bare records. */
export function initialLinkState(config: LinkConfig, accepting = true): LinkState {
  return config.framing === 'none' ? initialBareState(config, accepting) : { phase: 'neutral', config, accepting };
}

/** The state to read a capture with: it may start mid-session (no ENQ, first frame number unknown). */
export function captureStartState(config: LinkConfig): LinkState {
  if (config.framing === 'none') return initialBareState(config, true);
  return { phase: 'receiving', config, accepting: true, lastFrameNumber: null, lastText: null, message: newMessage(), partial: null, refusals: 0 };
}

/** True for the `framing: none` states. */
export function isBare(state: LinkState): state is BareState {
  return state.config.framing === 'none';
}

/**
 * Runs `input` and every input its effects lead to (a commit's outcome) through step() in a loop (drive.ts);
 * `perform` is given the state the step left.
 */
export function drive(state: LinkState, input: LinkInput, perform: (effect: LinkEffect, after: LinkState) => LinkInput | void): LinkState {
  return driveMachine(step, state, input, perform);
}

/** One transition of the receiver. Pure: no I/O, no timers, no clock; the given state is left as it was. */
export function step(state: LinkState, input: LinkInput): StepResult {
  if (input.kind === 'accepting') return { state: { ...state, accepting: input.accepting }, effects: [] };
  return isBare(state) ? bareStep(state, input) : framedStep(state, input);
}

/** Bytes the receiver holds in memory (bounded by MAX_MESSAGE_BYTES and maxFrameBytes). */
export function heldBytes(state: LinkState): number {
  if (isBare(state)) return bareHeldBytes(state);
  switch (state.phase) {
    case 'neutral':
      return 0;
    case 'receiving':
      return state.message.bytes + (state.partial?.length ?? 0);
    case 'committing':
      return state.message.bytes + (state.completing?.bytes.length ?? 0) + state.inbox.bytes;
    case 'aborted':
      return state.partial?.length ?? 0;
    case 'retrying':
      return state.message.bytes;
  }
}
