// The three drivers behind one face: options schema, pure capture decoder, runner factory.
// The runtime, `labgate decode` and reprocessing all go through here, so they decode identically.
import type { z } from 'zod';
import { decodeAstmCapture } from '../drivers/astm/decode.js';
import { astmOptionsSchema } from '../drivers/astm/options.js';
import { createAstmRunner, type AstmMessageDecoder } from '../drivers/astm/runner.js';
import { decodeHl7Capture } from '../drivers/hl7/decode.js';
import { decodeHl7Message } from '../drivers/hl7/message.js';
import { hl7OptionsSchema } from '../drivers/hl7/options.js';
import { createHl7Runner, type Hl7MessageDecoder } from '../drivers/hl7/runner.js';
import { decodeLineCapture } from '../drivers/line/decode.js';
import { lineOptionsSchema } from '../drivers/line/options.js';
import { createLineRunner, type LineReportDecoder } from '../drivers/line/runner.js';
import type { InstrumentProfile } from './config/mapping.js';
import { detectionScope } from './detect/setting.js';
import type { DriverContext, DriverRunner } from './runner-contract.js';
import { TcpClientEndpoint } from './transport/tcp.js';
import type { DecodedMessage, Protocol } from './message.js';

/** One protocol's entry points, with its options already validated. */
export interface Driver {
  protocol: Protocol;
  decodeCapture(raw: Buffer, profile: InstrumentProfile): DecodedMessage[];
  /** Decodes what the journal holds of one message (reprocessing): the capture's bytes, or an HL7 block's payload. */
  decodeJournaled(raw: Buffer, profile: InstrumentProfile): DecodedMessage[];
  createRunner(ctx: DriverContext): DriverRunner;
}

/**
 * The per-message decoders the runners use instead of their own (each protocol's default when absent): the
 * injection point through which a test hands the running gateway a decoder that fails.
 */
export interface MessageDecoders {
  astm?: AstmMessageDecoder;
  hl7?: Hl7MessageDecoder;
  line?: LineReportDecoder;
}

export type DriverOptionsResult = { kind: 'ok'; driver: Driver } | { kind: 'invalid'; problems: { path: string; message: string }[] };

/** Validates an instrument's driver options and binds them into a Driver. */
export function bindDriver(protocol: Protocol, rawOptions: unknown, decoders: MessageDecoders = {}): DriverOptionsResult {
  switch (protocol) {
    case 'astm':
      return bind(astmOptionsSchema, rawOptions, (o) => ({
        protocol,
        decodeCapture: (raw, profile) => decodeAstmCapture(raw, profile, o),
        decodeJournaled: (raw, profile) => decodeAstmCapture(raw, profile, o),
        createRunner: (ctx) => createAstmRunner(ctx, o, decoders.astm),
      }));
    case 'hl7':
      return bind(hl7OptionsSchema, rawOptions, (o) => ({
        protocol,
        decodeCapture: (raw, profile) => decodeHl7Capture(raw, profile, o),
        decodeJournaled: (raw, profile) => [decodeHl7Message(raw, profile, o).decoded],
        // An analyzer's order port (orders.orderPort) is the one connection a driver opens itself.
        createRunner: (ctx) => createHl7Runner({ dial: (address) => new TcpClientEndpoint(address).open(), ...ctx }, o, decoders.hl7),
      }));
    case 'line':
      return bind(lineOptionsSchema, rawOptions, (o) => ({
        protocol,
        decodeCapture: (raw, profile) => decodeLineCapture(raw, profile, o),
        decodeJournaled: (raw, profile) => decodeLineCapture(raw, profile, o),
        createRunner: (ctx) => createLineRunner(ctx, o, decoders.line),
      }));
  }
}

function bind<S extends z.ZodType>(schema: S, input: unknown, make: (options: z.output<S>) => Driver): DriverOptionsResult {
  const parsed = schema.safeParse(input ?? {}, { reportInput: true });
  if (parsed.success) return { kind: 'ok', driver: make(parsed.data) };
  return {
    kind: 'invalid',
    problems: parsed.error.issues.map((issue) => ({
      path: issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join(''),
      message: issue.message.replace(/^Invalid (input|option): /, ''),
    })),
  };
}

/** An instrument's decoding identity and bound driver, built from the configuration. */
export interface BoundInstrument {
  profile: InstrumentProfile;
  driver: Driver;
}

/**
 * Binds every configured instrument's driver; problems carry the config path (`instruments[2].options.x`). An
 * instrument whose serial settings are still being detected has no driver to bind.
 */
export function bindInstruments(
  config: {
    gateway: { id: string };
    instruments: readonly {
      id: string;
      driver: Protocol | 'auto';
      timezone: string;
      mapping: InstrumentProfile['mapping'];
      options: unknown;
      transport?: Parameters<typeof detectionScope>[0];
    }[];
  },
  decoders: MessageDecoders = {},
): { kind: 'ok'; instruments: Map<string, BoundInstrument> } | { kind: 'invalid'; problems: { path: string; message: string }[] } {
  const instruments = new Map<string, BoundInstrument>();
  const problems: { path: string; message: string }[] = [];
  config.instruments.forEach((instrument, i) => {
    if (instrument.driver === 'auto' || (instrument.transport && detectionScope(instrument.transport))) return;
    const bound = bindDriver(instrument.driver, instrument.options, decoders);
    if (bound.kind === 'invalid') {
      for (const p of bound.problems) problems.push({ path: `instruments[${i}].options${p.path}`, message: p.message });
      return;
    }
    const profile = { id: instrument.id, gatewayId: config.gateway.id, timezone: instrument.timezone, mapping: instrument.mapping };
    instruments.set(instrument.id, { profile, driver: bound.driver });
  });
  return problems.length ? { kind: 'invalid', problems } : { kind: 'ok', instruments };
}
