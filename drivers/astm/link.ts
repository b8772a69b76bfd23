// The receiver's side of the LIS01-A2 link layer as a pure state machine: bytes, timer expiries, commit
// outcomes and the store's readiness come in as inputs; writes, timers, commits and events go out as effects.
// Durable before ACK (ARCHITECTURE.md invariant 1): the frame that completes a message (the ETX frame whose
// text ends with the L terminator record) is answered only after the runner reports the commit.
// The state is one union member per phase, each carrying only what means something in that phase.
import { driveMachine } from './drive.js';
import { bareStep, initialBareState, bareHeldBytes, type BareState } from './link-bare.js';
import type { LinkConfig, LinkEffect, LinkInput, Step } from './link-contract.js';
import { framedStep } from './link-framed.js';
import type { FramedState } from './link-framed-state.js';
import { newMessage } from './link-message.js';

export type { LinkConfig, LinkEffect, LinkEvent, LinkInput } from './link-contract.js';
export type { Aborted, Committing, FramedState, Neutral, Receiving, Retrying } from './link-framed-state.js';

/** The receiver's state: LIS01-A2 framing, or bare records (`framing: none`). */
export type LinkState = FramedState | BareState;

export type StepResult = Step<LinkState>;

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
