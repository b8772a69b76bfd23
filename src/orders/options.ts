// The two-way options every protocol shares (the query deadline, the bounds of one query, download polling, whether
// patient data is sent), so an ASTM and an HL7 instrument are configured with the same keys; each driver adds what
// only its messages have (drivers/astm/options.ts, drivers/hl7/options.ts).
import { z } from 'zod';

/** The protocol-neutral keys of `options.orders`; each driver's schema extends them. Off by default. */
export const ordersOptionsShape = {
  /** Answer host queries with the LIMS's orders. */
  query: z.boolean().default(false),
  /** Poll the LIMS's pending worklist for this instrument and send each new specimen's orders once. */
  download: z.boolean().default(false),
  /** The analyzer's deadline for an answer, counted from the end of its query (its host query timeout setting). */
  queryTimeoutMs: z.number().int().min(1_000).max(300_000).default(10_000),
  /**
   * Specimens one query message may name (a range or `ALL` counts one, being a worklist request): a rack or a carousel
   * segment fits, a query naming thousands does not become thousands of LIMS lookups. Those past it are refused: not
   * looked up, not answered, counted (`specimens-over-limit`) and logged.
   */
  maxSpecimensPerQuery: z.number().int().min(1).max(10_000).default(100),
  /** LIMS lookups of one query message in flight at once (the orders client keeps 4 connections). */
  lookupsInFlight: z.number().int().min(1).max(32).default(4),
  /** How often download mode asks the LIMS for the pending worklist. */
  pollIntervalMs: z.number().int().min(1_000).max(3_600_000).default(30_000),
  /** Send the LIMS's patient (id, name, birth date, sex) with the orders; otherwise nothing of the patient is sent. */
  patient: z.boolean().default(false),
};

/** What the order desk and the courier read of any driver's orders options. */
export interface CommonOrdersOptions {
  query: boolean;
  download: boolean;
  queryTimeoutMs: number;
  maxSpecimensPerQuery: number;
  lookupsInFlight: number;
  pollIntervalMs: number;
  patient: boolean;
}
