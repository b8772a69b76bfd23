// The status page's only view of the gateway: one read snapshot plus three audited operator actions.
// The page never touches the store, the drains or the supervisors itself, so tests drive it with an in-memory
// source and the composition root adapts the real parts (see gateway-source.ts). Nothing here carries patient
// demographics or secrets: results are the keyed result's clinical fields, captures are listed without bytes.

/** An instrument's link state, as the port supervisor reports it. */
export type InstrumentState = 'connected' | 'waiting-for-device' | 'error' | 'stopped';

/** One instrument's line on the page; counters are since local midnight. */
export interface InstrumentView {
  id: string;
  state: InstrumentState;
  /** Why it is not connected (or why the last session ended); null while all is well. */
  reason: string | null;
  /** `/dev/serial/by-id/...` or `tcp://host:port`. */
  port: string;
  /** Epoch ms the current state began. */
  since: number;
  lastByteAt: number | null;
  lastMessageAt: number | null;
  /** Epoch ms of the next reopen attempt while not connected. */
  nextAttemptAt: number | null;
  messagesToday: number;
  resultsToday: number;
  naks: number;
  checksumErrors: number;
  /** Results rejected today (unmapped code, bad time, ...). */
  rejected: number;
  /** Connections a listening port refused since the gateway started (allow-list, a session already talking). */
  refusedConnections: number;
  /** Messages lost since the gateway started (a printer's reports the store could not take in time). */
  lostMessages?: number;
  /** Rejected messages refused since the gateway started: it sent only rejected ones, over gateway.rejectedLimit. */
  refusedOverLimit?: number;
  /** Present while its serial settings are detected (`auto` in the configuration). */
  detection?: DetectionView;
  /** Today's host queries, answers and downloads: present for a two-way instrument. */
  orders?: OrdersToday;
}

/** A two-way instrument's day: what it asked, what it was answered and why, what was downloaded to it. */
export interface OrdersToday {
  queries: number;
  answeredWithOrders: number;
  /** "No information" answers by reason (`no-orders`, `lims-timeout`, `lims-unavailable`, ...), largest first. */
  noInformation: { reason: string; count: number }[];
  /** Answers that never reached the analyzer (the line busy past its deadline, no reply). */
  answersFailed: number;
  downloads: number;
}

/** What detection found on an instrument's port, and the configuration lines that make it permanent. */
export interface DetectionView {
  state: 'searching' | 'found';
  /** `ASTM at 9600 8N1: ENQ every 10 s`, or where the search stands. */
  summary: string;
  /** Lines replacing the entry's `driver` and `transport` (empty while searching). */
  yaml: string[];
  note: string | null;
  /** Each setting tried, with what it showed. */
  trials: { setting: string; outcome: 'noise' | 'silence' | 'recognized'; why: string; at: number }[];
}

/** A sink's circuit in the technician's words: delivering, paused (until nextProbeAt), or probing right now. */
export type CircuitView = 'delivering' | 'paused' | 'probing';

/** One sink's line on the page. */
export interface SinkView {
  sink: string;
  pending: number;
  /** created_at of the oldest pending row (epoch ms), or null. */
  oldestPendingAt: number | null;
  deliveredLastHour: number;
  dead: number;
  conflicts: number;
  circuit: CircuitView;
  /** Why the sink is paused (its last failure), or null. */
  reason: string | null;
  nextProbeAt: number | null;
  /** Seconds to drain the backlog at the measured rate; null when nothing was delivered lately. */
  etaSeconds: number | null;
}

/** Where one result stands in one sink's outbox. */
export type DeliveryState = 'pending' | 'sent' | 'dead' | 'conflict' | 'not-queued';

/** The clinical fields of a result (no demographics exist in a keyed result). */
export interface ResultFields {
  accession: string;
  instrumentId: string;
  loinc: string;
  analyzerCode: string;
  valueText: string;
  unit: string | null;
  flags: string[];
  status: string;
  /** Canonical key form, `YYYY-MM-DDTHH:MM:SS+00:00`. */
  resultedAt: string;
  referenceRange: string | null;
  qc: boolean;
}

/** A recent result with its delivery state per sink. */
export interface ResultView extends ResultFields {
  dedupKey: string;
  delivery: { sink: string; state: DeliveryState }[];
}

/** A dead-lettered outbox row. */
export interface DeadLetterView {
  sink: string;
  dedupKey: string;
  /** From the stored result, when the source joins it; helps the technician find the sample. */
  accession: string | null;
  loinc: string | null;
  reason: string;
  attempts: number;
  /** Epoch ms it was dead-lettered. */
  failedAt: number;
}

/** A conflict with both versions side by side; a version is null when its payload could not be read. */
export interface ConflictView {
  id: number;
  dedupKey: string;
  /** 'ingest', or the sink that reported holding a different version. */
  origin: string;
  reason: string;
  detectedAt: number;
  occurrences: number;
  stored: ResultFields | null;
  incoming: ResultFields | null;
}

/** A rejected capture: why, never its raw bytes. */
export interface RejectedCaptureView {
  id: number;
  instrumentId: string;
  protocol: string;
  receivedAt: number;
  /** The first few reasons (store/captures.ts REASONS_LISTED); `reasonCount` says how many it has, when known. */
  reasons: { reason: string; analyzerCode?: string; accession?: string }[];
  reasonCount?: number;
}

/** One analyzer code an instrument has sent, with the mapping it meets now. */
export interface CodeSeenView {
  code: string;
  seen: number;
  lastValue: string | null;
  lastUnit: string | null;
  lastAt: number;
  /** The mapping's LOINC; null when the code is not mapped. */
  loinc: string | null;
  /** Why its results are rejected now (`not mapped`, `unit differs`), or null when they are stored. */
  problem: string | null;
  /** The mapping line this code needs (`- { code: "GLU", loinc: "", unit: "mmol/L" }`), or has. */
  yaml: string;
}

/** A page of one instrument's codes: those that need a mapping first, then the most recently seen. */
export interface InstrumentCodesView {
  instrumentId: string;
  /** At most CODES_SHOWN (codes-view.ts): this page's. */
  codes: CodeSeenView[];
  /** Codes the store keeps for the instrument, and how many of them need a mapping (listed or not). */
  total: number;
  needMapping: number;
  /** This page (from 1) and how many there are; the others are at /codes and /codes.json (paths.ts). */
  page: number;
  pages: number;
}

/** A page of an instrument's codes, with what the page around it shows; or why there is none. */
export type CodesPageOutcome = { kind: 'page'; gatewayId: string; now: number; codes: InstrumentCodesView } | { kind: 'not-found'; message: string };

/** The last 24 hours, hour by hour, from the store's counters. */
export interface DayView {
  /** Epoch ms of the first hour's start, and now. */
  from: number;
  to: number;
  /** Each hour's clock label (`14`), oldest first; the last is the current hour. */
  labels: string[];
  instruments: { id: string; results: number[]; rejected: number[] }[];
  /** Deliveries per hour, and the backlog as a step line (its level from each point to the next). */
  sinks: { sink: string; delivered: number[]; backlog: { at: number; pending: number }[] }[];
}

/** The outcome of the last configuration reload (`systemctl reload labgate`). */
export interface ReloadView {
  at: number;
  outcome: 'applied' | 'refused';
  summary: string;
  /** The first PROBLEMS_LISTED (listed.ts); `problemCount` says how many there were when more. */
  problems: { path: string; message: string }[];
  problemCount?: number;
  waitingForRestart: string[];
}

/** A serial port no instrument names, listened to: what detection heard, and whether the settings are found. */
export interface NewPortCard {
  path: string;
  found: boolean;
  summary: string;
  note: string | null;
}

/** Everything the page shows, read at one instant (`now`, epoch ms). */
export interface StatusSnapshot {
  gatewayId: string;
  now: number;
  instruments: InstrumentView[];
  sinks: SinkView[];
  /** Newest first. */
  recentResults: ResultView[];
  /** The oldest of each queue, at most the source's limit (100 by default; dead letters: per kind of row). */
  deadLetters: DeadLetterView[];
  conflicts: ConflictView[];
  rejectedCaptures: RejectedCaptureView[];
  /** How many each queue holds in all, listed or not; absent where the source cannot count them. */
  queueTotals?: { deadLetters: number; conflicts: number; rejectedCaptures: number };
  /** The last configuration reload; absent before the first. */
  reload?: ReloadView;
  /** Serial ports no instrument names, being detected; absent when the gateway looks for none. */
  newPorts?: NewPortCard[];
  /** The day at a glance; absent when the store keeps no hourly counters. */
  day?: DayView;
  /** The first page of the codes of each configured instrument that sent any; absent when the store keeps none. */
  codesSeen?: InstrumentCodesView[];
  /** The size bound on rejected captures (the newest are kept), when retention enforces one. */
  rejectedRetention?: { keptMb: number; prunedSinceStart: number };
  /** The wall clock: synchronised or not (and who says so), and its last step since start. */
  clock?: ClockView;
  /** The disk guard: refusing messages below the floor, and why. */
  disk?: DiskView;
}

/** What is known of the gateway's wall clock. */
export interface ClockView {
  state: 'synchronised' | 'unsynchronised' | 'unknown';
  source: string;
  /** The last step since start (wall time as the clock reads now, and how far: negative is back). */
  lastStep?: { at: number; stepMs: number };
}

/** The data directory's free space as the disk guard last measured it. */
export interface DiskView {
  accepting: boolean;
  freeBytes: number | null;
  floorBytes: number;
  /** Why messages are refused, while they are. */
  reason: string | null;
}

/** What an action did, in a sentence for the technician; `not-found` when someone else got there first. */
export type ActionOutcome = { kind: 'done'; message: string } | { kind: 'not-found'; message: string } | { kind: 'failed'; message: string };

/** Keep the stored version, or forward the incoming one to the sinks as a correction. */
export type ConflictChoice = 'keep' | 'forward';

/** A value now or later: sources backed by SQLite answer synchronously, others may not. */
export type MaybePromise<T> = T | Promise<T>;

/** The status page's port to the gateway. Every action is audited by the source with `actor` and the time. */
export interface StatusSource {
  snapshot(): MaybePromise<StatusSnapshot>;
  /** Makes one dead letter (by dedup key) or all of one sink's dead letters pending again. */
  retryDeadLetter(sink: string, which: { key: string } | 'all', actor: string): MaybePromise<ActionOutcome>;
  resolveConflict(id: number, choice: ConflictChoice, actor: string): MaybePromise<ActionOutcome>;
  /** Decodes a rejected capture again with the current configuration and ingests it. */
  reprocessCapture(id: number, actor: string): MaybePromise<ActionOutcome>;
  /** Page `page` (from 1) of a configured instrument's codes. */
  codes(instrumentId: string, page: number): MaybePromise<CodesPageOutcome>;
}
