// The three drivers behind one face: options schema, pure capture decoder, runner factory.
// The runtime, `labgate decode` and reprocessing all go through here, so they decode identically.
// ASTM's decoder and runner are loaded with this module; HL7's and the printed line's only when a configuration names
// them (loadDrivers): a start after a power cut then reads no module of a protocol none of its analyzers speaks.
import type { z } from 'zod';
import { decodeAstmCapture } from '../drivers/astm/decode.js';
import { astmOptionsSchema } from '../drivers/astm/options.js';
import { createAstmRunner, type AstmMessageDecoder } from '../drivers/astm/runner.js';
import type { Hl7MessageDecoder } from '../drivers/hl7/runner.js';
import { hl7OptionsSchema } from '../drivers/hl7/options.js';
import type { LineReportDecoder } from '../drivers/line/runner.js';
import { lineOptionsSchema } from '../drivers/line/options.js';
import type { InstrumentProfile } from './config/mapping.js';
import { detectionScope } from './detect/setting.js';
import type { DriverContext, DriverRunner } from './runner-contract.js';
import { TcpClientEndpoint } from './transport/tcp.js';
import type { DecodedMessage, Protocol } from './message.js';

// The entry points of the protocols loaded on demand, once loadDrivers has loaded them.
const hl7Module = () =>
  Promise.all([import('../drivers/hl7/decode.js'), import('../drivers/hl7/message.js'), import('../drivers/hl7/runner.js')]).then(
    ([decode, message, runner]) => ({ ...decode, ...message, ...runner }),
  );
const lineModule = () =>
  Promise.all([import('../drivers/line/decode.js'), import('../drivers/line/runner.js')]).then(([decode, runner]) => ({ ...decode, ...runner }));
const loaded: { hl7?: Awaited<ReturnType<typeof hl7Module>>; line?: Awaited<ReturnType<typeof lineModule>> } = {};

/**
 * Loads the decoders and runners of the protocols these instruments speak. Whatever decodes a capture or creates a
 * runner with a bound driver (the gateway's start and reload, `labgate decode`) awaits it first; binding alone, to
 * validate a configuration, does not need it.
 */
export async function loadDrivers(instruments: readonly { driver: Protocol | 'auto' }[]): Promise<void> {
  const protocols = new Set(instruments.map((i) => i.driver));
  if (protocols.has('hl7')) loaded.hl7 ??= await hl7Module();
  if (protocols.has('line')) loaded.line ??= await lineModule();
}

function hl7(): NonNullable<typeof loaded.hl7> {
  if (!loaded.hl7) throw new Error('the HL7 driver is used before loadDrivers loaded it');
  return loaded.hl7;
}

function line(): NonNullable<typeof loaded.line> {
  if (!loaded.line) throw new Error('the line driver is used before loadDrivers loaded it');
  return loaded.line;
}

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
        decodeCapture: (raw, profile) => hl7().decodeHl7Capture(raw, profile, o),
        decodeJournaled: (raw, profile) => [hl7().decodeHl7Message(raw, profile, o).decoded],
        // An analyzer's order port (orders.orderPort) is the one connection a driver opens itself.
        createRunner: (ctx) => hl7().createHl7Runner({ dial: (address) => new TcpClientEndpoint(address).open(), ...ctx }, o, decoders.hl7),
      }));
    case 'line':
      return bind(lineOptionsSchema, rawOptions, (o) => ({
        protocol,
        decodeCapture: (raw, profile) => line().decodeLineCapture(raw, profile, o),
        decodeJournaled: (raw, profile) => line().decodeLineCapture(raw, profile, o),
        createRunner: (ctx) => line().createLineRunner(ctx, o, decoders.line),
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
