// The one configuration schema (ARCHITECTURE.md: validated once at start). Secrets are only ever file paths,
// so the YAML can be world-readable and systemd's LoadCredential works. Objects are strict: a misspelt key
// (`baudrate`) is reported, never silently ignored with the default taking its place.
import { z } from 'zod';
import { DEFAULT_MAX_ANSWER_BYTES } from '../sinks/answer-body.js';
import { isUcum } from '../sinks/fhir-ucum.js';
import { isAddressOrBlock } from '../transport/allow-list.js';
import { isValidZone } from '../zoned-time.js';
import { analyteMappingSchema } from './mapping.js';

/** Baud rates an RS-232 analyzer link uses. */
export const baudRates = [1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200] as const;

/** What an instrument id may be. */
export const instrumentIdPattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const id = z.string().trim().regex(instrumentIdPattern, 'expected letters, digits, dot, dash or underscore (1-64 characters)');
const filePath = z.string().trim().min(1, 'expected a file path');
const port = z.number().int().min(1).max(65535);

const serialTransport = z.strictObject({
  kind: z.literal('serial'),
  /** A stable path such as /dev/serial/by-id/usb-FTDI_...-if00-port0. */
  path: filePath,
  /** `auto` (here, in dataBits or in parity): listen without answering and show the settings found on the page. */
  baudRate: z
    .union([z.literal('auto'), z.number()])
    .refine((v) => v === 'auto' || (baudRates as readonly number[]).includes(v), { message: `expected one of ${baudRates.join(', ')} or auto` })
    .default(9600),
  dataBits: z.union([z.literal(7), z.literal(8), z.literal('auto')]).default(8),
  parity: z.enum(['none', 'even', 'odd', 'auto']).default('none'),
  stopBits: z.union([z.literal(1), z.literal(2)]).default(1),
  rtscts: z.boolean().default(false),
});

const tcpServerTransport = z.strictObject({
  kind: z.literal('tcp-server'),
  host: z.string().default('0.0.0.0'),
  port,
  /** Source addresses or CIDR blocks that may connect (the analyzer, its terminal server); absent: anyone. */
  allow: z
    .array(z.string().trim().refine(isAddressOrBlock, { message: 'expected an IP address or a CIDR block such as 10.1.2.0/24' }))
    .min(1, 'expected at least one address; leave allow out to accept any')
    .optional(),
  /** Closes a session that sent no protocol traffic (bytes alone are not) for this long; 0 never does (many analyzers keep one connection for days). */
  idleTimeoutSeconds: z.number().int().min(0).default(0),
});

const tcpClientTransport = z.strictObject({
  kind: z.literal('tcp-client'),
  host: z.string().min(1),
  port,
});

/** How labgate reaches an analyzer: serial (default), or TCP either way round. */
export const transportSchema = z.discriminatedUnion('kind', [serialTransport, tcpServerTransport, tcpClientTransport]);

/** One analyzer. Driver options are validated by the driver's own schema when the config is loaded. */
export const instrumentSchema = z.strictObject({
  id,
  /** `auto` only while the serial settings are detected: the page then names the protocol found. */
  driver: z.enum(['astm', 'hl7', 'line', 'auto']),
  enabled: z.boolean().default(true),
  timezone: z.string().refine(isValidZone, { message: 'expected an IANA time zone (Europe/Vienna) or a fixed offset (+01:00)' }),
  transport: transportSchema,
  mapping: z.array(analyteMappingSchema).default([]),
  /** Options for the driver named by `driver` (see the driver's options schema). */
  options: z.record(z.string(), z.unknown()).default({}),
});

const postgresSink = z.strictObject({
  enabled: z.boolean().default(true),
  /** postgres://user@host:5432/db — without a password; the password comes from passwordFile. */
  url: z.string().min(1),
  passwordFile: filePath.optional(),
  tls: z.object({ caFile: filePath.optional(), mode: z.enum(['disable', 'require', 'verify-full']).default('verify-full') }).optional(),
  batchSize: z.number().int().min(1).max(10_000).default(500),
  poolSize: z.number().int().min(1).max(16).default(2),
  /** Schema holding result_load and result_load_audit (created or upgraded by `labgate pg-migrate`). */
  schema: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, 'expected a plain PostgreSQL identifier')
    .default('public'),
  connectTimeoutMs: z.number().int().positive().default(10_000),
  /** Bound on one batch statement, on the server (statement_timeout) and in the client. */
  statementTimeoutMs: z.number().int().positive().default(30_000),
});

/** Bytes of one answer read at most (the server's, its token endpoint's); past them the exchange is that sink's error. */
const maxAnswerBytes = z
  .number()
  .int()
  .min(64 * 1024)
  .max(256 * 1024 * 1024)
  .default(DEFAULT_MAX_ANSWER_BYTES);

const limsAuth = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('oauth2'), tokenUrl: z.string().url(), clientId: z.string().min(1), clientSecretFile: filePath }),
  z.strictObject({ kind: z.literal('static'), tokenFile: filePath }),
]);

const limsSink = z.strictObject({
  enabled: z.boolean().default(true),
  baseUrl: z.string().url(),
  resourcePath: z.string().startsWith('/').default('/records'),
  /** Where orders are looked up for two-way instruments, and dispatches reported (`{ordersPath}/{orderId}/dispatch/{instrument}`). */
  ordersPath: z.string().startsWith('/').default('/orders'),
  concurrency: z.number().int().min(1).max(64).default(8),
  caFile: filePath.optional(),
  timeouts: z
    .object({
      connectMs: z.number().int().positive().default(5_000),
      headersMs: z.number().int().positive().default(15_000),
      bodyMs: z.number().int().positive().default(15_000),
    })
    .default({ connectMs: 5_000, headersMs: 15_000, bodyMs: 15_000 }),
  maxAnswerBytes,
  batchSize: z.number().int().min(1).max(1_000).default(64),
  auth: limsAuth,
});

// An absolute URI as FHIR naming systems are (`https://hospital.example/accession`, `urn:oid:1.2.3`).
const namingSystem = z
  .string()
  .trim()
  .regex(/^[A-Za-z][A-Za-z0-9+.-]*:[^\s|]+$/, 'expected an absolute URI without spaces or `|` (https://... or urn:...)');

const fhirAuth = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('none') }),
  z.strictObject({ kind: z.literal('static'), tokenFile: filePath }),
  z.strictObject({
    kind: z.literal('oauth2'),
    tokenUrl: z.string().url(),
    clientId: z.string().min(1),
    clientSecretFile: filePath,
    scope: z.string().min(1).optional(),
  }),
  // SMART Backend Services: client credentials with a JWT signed by the gateway's private key (private_key_jwt).
  z.strictObject({
    kind: z.literal('smart-backend'),
    tokenUrl: z.string().url(),
    clientId: z.string().min(1),
    privateKeyFile: filePath,
    algorithm: z.enum(['ES384', 'RS384']).default('ES384'),
    keyId: z.string().min(1),
    scope: z.string().min(1).default('system/Observation.write'),
  }),
]);

const fhirSink = z.strictObject({
  enabled: z.boolean().default(true),
  /** The FHIR base URL, e.g. https://fhir.hospital.example/fhir/R4. */
  baseUrl: z.string().url(),
  createMode: z.enum(['auto', 'conditional-create', 'update-as-create']).default('auto'),
  identifierSystem: namingSystem.default('urn:labgate:dedup-key'),
  specimenSystem: namingSystem.default('urn:labgate:accession'),
  deviceSystem: namingSystem.default('urn:labgate:instrument'),
  analyzerCodeSystem: namingSystem.default('urn:labgate:test-code'),
  ucumUnits: z.record(z.string(), z.string().refine(isUcum, { message: 'expected a UCUM code (case-sensitive, e.g. 10*3/uL)' })).default({}),
  qc: z.boolean().default(false),
  batchSize: z.number().int().min(1).max(1_000).default(50),
  connections: z.number().int().min(1).max(16).default(4),
  caFile: filePath.optional(),
  timeouts: z
    .object({
      connectMs: z.number().int().positive().default(5_000),
      headersMs: z.number().int().positive().default(30_000),
      bodyMs: z.number().int().positive().default(30_000),
    })
    .default({ connectMs: 5_000, headersMs: 30_000, bodyMs: 30_000 }),
  maxAnswerBytes,
  auth: fhirAuth,
});

const deliverySchema = z.strictObject({
  backoff: z
    .object({ baseMs: z.number().int().positive().default(1_000), capMs: z.number().int().positive().default(300_000) })
    .default({ baseMs: 1_000, capMs: 300_000 }),
  /** How often a paused (circuit-open) sink is probed with one request, when it gave no Retry-After. */
  probeIntervalMs: z.number().int().positive().default(15_000),
  /** Sink-wide failures in a row (no answer between) that pause a sink; a failed connect pauses it at once. */
  failureThreshold: z.number().int().min(1).max(1_000).default(5),
  /** Batches in flight per sink. */
  inFlight: z.number().int().min(1).max(16).default(2),
});

/** The whole configuration file. */
export const configSchema = z.strictObject({
  gateway: z.strictObject({
    id,
    dataDir: filePath.default('/var/lib/labgate'),
    /** The instruments the status page manages (config/instruments-file.ts); default <dataDir>/instruments.yaml. */
    instrumentsFile: filePath.optional(),
    /** Directories whose serial devices no instrument names are listened to (never answered) and offered on the page. */
    newPortDirectories: z.array(filePath).max(8).default(['/dev/serial/by-id']),
    http: z
      .object({
        host: z.string().default('127.0.0.1'),
        port: z.number().int().min(0).max(65535).default(8080),
        tokenFile: filePath.optional(),
        /** The admin token: a status page session unlocked with it may change the configuration (none: nobody may). */
        adminTokenFile: filePath.optional(),
        /** Sockets the listener holds at once (idle ones make room for new ones); well below the unit's LimitNOFILE. */
        maxConnections: z.number().int().min(8).max(1024).default(256),
      })
      .default({ host: '127.0.0.1', port: 8080, maxConnections: 256 }),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).default('info'),
    /** Below this much free space the gateway refuses new messages (ENQ NAK, HL7 AR) instead of crashing. */
    diskFloorMb: z.number().int().min(0).default(200),
    retention: z
      .object({
        resultsDays: z.number().int().min(1).default(30),
        auditDays: z.number().int().min(1).default(365),
        /** MB of the newest rejected captures kept for reprocessing; older ones are pruned. */
        rejectedMb: z.number().int().min(1).default(100),
      })
      .default({ resultsDays: 30, auditDays: 365, rejectedMb: 100 }),
    /** While an instrument sends only rejected messages it journals this much a minute; the rest are refused. */
    rejectedLimit: z
      .object({ messagesPerMinute: z.number().int().min(1).default(600), mbPerMinute: z.number().int().min(1).default(2) })
      .default({ messagesPerMinute: 600, mbPerMinute: 2 }),
  }),
  instruments: z.array(instrumentSchema).default([]),
  sinks: z.strictObject({ postgres: postgresSink.optional(), lims: limsSink.optional(), fhir: fhirSink.optional() }).default({}),
  delivery: deliverySchema.default({ backoff: { baseMs: 1_000, capMs: 300_000 }, probeIntervalMs: 15_000, failureThreshold: 5, inFlight: 2 }),
  alerts: z
    .object({ backlog: z.number().int().min(1).default(10_000), oldestAgeMinutes: z.number().int().min(1).default(60) })
    .default({ backlog: 10_000, oldestAgeMinutes: 60 }),
});

export type Config = z.infer<typeof configSchema>;
export type InstrumentConfig = z.infer<typeof instrumentSchema>;
export type SerialTransportConfig = z.infer<typeof serialTransport>;
export type PostgresSinkConfig = z.infer<typeof postgresSink>;
export type LimsSinkConfig = z.infer<typeof limsSink>;
export type FhirSinkConfig = z.infer<typeof fhirSink>;
export type DeliveryConfig = z.infer<typeof deliverySchema>;
