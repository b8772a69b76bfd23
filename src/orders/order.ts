// The order model, protocol-neutral: what the LIMS says a specimen needs, what an analyzer asked for, and what it
// is answered. Specimen-centric, as both ASTM (LIS2-A2 Q → H/P/O/L) and HL7 IHE LAW (QBP^Q11 → RSP^K11, OML^O33:
// SPM with its ORC/OBR) are: one specimen, its tests, its patient. Patient data lives only here and in the answer
// encoders; it never enters a log line, a reason or the status page.
import { z } from 'zod';

/** One test the LIMS ordered for a specimen, named by LOINC. */
export interface Order {
  orderId: string;
  loinc: string;
  priority: 'routine' | 'stat';
  /** RFC 3339, as the LIMS sent it. */
  orderedAt: string;
}

/** Demographics the LIMS sent; sent on to an analyzer only when its options ask for them. */
export interface Patient {
  id: string;
  name: string;
  /** YYYY-MM-DD, or empty. */
  birthDate: string;
  sex: 'F' | 'M' | 'U';
}

/** A specimen's orders as the LIMS holds them. */
export interface SpecimenOrders {
  accession: string;
  orders: Order[];
  patient: Patient | null;
}

/** Which specimens a query names (LIS2-A2 Q.3/Q.4; an IHE LAW QPD names one container). */
export type SpecimenSelector = { kind: 'id'; accession: string } | { kind: 'range'; from: string; to: string } | { kind: 'all' };

/**
 * An analyzer's question. `tests`: the analyzer codes it asks about, or 'all'. `request`: what it wants back:
 * orders (LIS2-A2 Q.13 `O`, `D` or empty), cancel of its previous query (`A`), or something labgate does not hold
 * (results: any other status code).
 */
export interface OrderQuery {
  specimens: SpecimenSelector[];
  tests: 'all' | string[];
  request: 'orders' | 'cancel' | 'unsupported';
  /** The request status code as sent (trimmed), for the record. */
  requestCode: string;
  /** Specimens named past what one query may ask that the driver did not even read; refused like the others past it. */
  unread?: number;
}

/** Why an analyzer is answered "no information" (also the reasons /metrics counts answers under). Never carries patient data. */
export const noInformationReasons = ['no-orders', 'not-expressible', 'lims-timeout', 'lims-unavailable', 'lims-error', 'unsupported-request'] as const;
export type NoInformationReason = (typeof noInformationReasons)[number];

/** An order with the analyzer's own code for it (reverse mapping). */
export interface InstrumentOrder extends Order {
  analyzerCode: string;
}

/** A specimen's orders as one instrument can run them. */
export interface InstrumentSpecimen {
  accession: string;
  orders: InstrumentOrder[];
  patient: Patient | null;
}

// ---- The LIMS's JSON, checked at the boundary: bytes from the network are data, never trusted shapes. ----

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

const orderSchema = z.object({
  orderId: z.string().trim().min(1).max(128),
  loinc: z.string().trim().min(1).max(32),
  priority: z.enum(['routine', 'stat']).default('routine'),
  orderedAt: z.string().regex(rfc3339, 'expected an RFC 3339 time'),
});

const patientSchema = z.object({
  id: z.string().max(128).default(''),
  name: z.string().max(256).default(''),
  birthDate: z.union([z.literal(''), z.string().regex(/^\d{4}-\d{2}-\d{2}$/)]).default(''),
  sex: z.enum(['F', 'M', 'U']).catch('U'),
});

const specimenSchema = z.object({
  accession: z.string().trim().min(1).max(128),
  orders: z.array(orderSchema).max(1_000).default([]),
  patient: patientSchema.nullable().default(null),
});

const worklistSchema = z.object({ specimens: z.array(specimenSchema).max(10_000) });

/** A LIMS answer read, or why it could not be (paths and zod messages only: never the body's values). */
export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Reads `GET {ordersPath}?accession=A` (200). */
export function parseSpecimenOrders(body: unknown): Parsed<SpecimenOrders> {
  return checked(specimenSchema.safeParse(body));
}

/** Reads `GET {ordersPath}?instrument=ID&status=pending` (200). */
export function parseWorklist(body: unknown): Parsed<SpecimenOrders[]> {
  const r = checked(worklistSchema.safeParse(body));
  return r.ok ? { ok: true, value: r.value.specimens } : r;
}

function checked<T>(r: { success: true; data: T } | { success: false; error: z.ZodError }): Parsed<T> {
  if (r.success) return { ok: true, value: r.data };
  const issues = r.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
  return { ok: false, reason: `unexpected orders answer (${issues.join('; ')})` };
}
