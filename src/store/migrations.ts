// Numbered schema migrations, tracked with PRAGMA user_version. Append only: a released migration never changes.
// Nothing has been released yet, so migration 1 may still be edited until the first deployment.
import type Database from 'better-sqlite3';
import { keepStatusCodeAndBound } from './migrate-censored.js';

/** SQL, or a function for a step SQL alone cannot do (it runs inside the migration's transaction). */
export type Migration = string | ((db: Database.Database) => void);

/** Migration n (1-based) is migrations[n - 1]. */
export const migrations: readonly Migration[] = [
  /* 1: capture journal, results, outbox, conflicts, audit */ `
  CREATE TABLE captures (
    id            INTEGER PRIMARY KEY,
    instrument_id TEXT    NOT NULL,
    protocol      TEXT    NOT NULL,
    received_at   INTEGER NOT NULL,             -- epoch ms
    raw           BLOB    NOT NULL,             -- exactly as received
    raw_sha256    TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('accepted', 'rejected')),
    reasons       TEXT,                         -- JSON array of rejections, null when accepted
    result_count  INTEGER NOT NULL DEFAULT 0,
    processed_at  INTEGER NOT NULL,
    counted_keys  TEXT                          -- JSON dedup keys already counted; kept while rejected so a reprocess counts none twice
  );
  CREATE INDEX captures_rejected ON captures (id) WHERE status = 'rejected';
  -- No index on received_at: retention walks captures by id, which follows receipt (retention.ts, capturesStep).

  CREATE TABLE results (
    id               INTEGER PRIMARY KEY,     -- arrival order: rows append instead of landing at random pages
    dedup_key        TEXT    NOT NULL,
    record_id        TEXT    NOT NULL,
    accession        TEXT    NOT NULL,
    analyte_loinc    TEXT    NOT NULL,
    instrument_id    TEXT    NOT NULL,
    resulted_at      TEXT    NOT NULL,          -- canonical key form
    value_text       TEXT    NOT NULL,
    value            REAL,
    comparator       TEXT,
    unit             TEXT,
    status           TEXT    NOT NULL,
    flags            TEXT    NOT NULL,          -- JSON array
    reference_range  TEXT,
    qc               INTEGER NOT NULL,
    source           TEXT    NOT NULL,          -- JSON provenance, so a conflict shows the stored version exactly
    analyzer_code    TEXT    NOT NULL,
    clinical_digest  TEXT    NOT NULL,
    capture_id       INTEGER NOT NULL,
    load_count       INTEGER NOT NULL DEFAULT 1,
    first_seen_at    INTEGER NOT NULL,
    last_seen_at     INTEGER NOT NULL,
    -- What every sink is sent, stored once for all of them (last: the columns before it read without touching it).
    -- The outbox rows of this result are ids id * 16 + slot (layout.ts); a claim finds this row by rowid.
    payload          TEXT    NOT NULL,          -- JSON of a ResultPayload
    payload_sha256   TEXT    NOT NULL           -- a correction replaces both; an outcome applies only to the one claimed
  );
  -- The key is unique through (resulted_at, dedup_key): the key hashes resulted_at, so one key has one resulted_at,
  -- and results arrive in about resulted_at order, so a commit's index entries share a page or two instead of
  -- dirtying one random page each (a hash key alone costs ~30 WAL frames a message; see bench/ingest).
  -- Look a result up by both columns.
  CREATE UNIQUE INDEX results_key ON results (resulted_at, dedup_key);
  CREATE INDEX results_first_seen ON results (first_seen_at);

  -- Delivery state only: the payload is the result's (results.payload), so marking a row sent rewrites ~100 bytes.
  CREATE TABLE outbox (
    id               INTEGER PRIMARY KEY,     -- results.id * 16 + slot (layout.ts)
    sink             TEXT    NOT NULL,
    dedup_key        TEXT    NOT NULL,
    state            TEXT    NOT NULL CHECK (state IN ('pending', 'sent', 'dead', 'conflict')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,          -- epoch ms
    last_error       TEXT,
    etag             TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    sent_at          INTEGER
  );
  -- One row per (sink, result) is upheld by ingest: outbox rows are written only by a result's first insert, in
  -- the same transaction as the results row that results_key admits once. A unique index on (sink, dedup_key)
  -- would place every commit's entries at random pages and more than halve durable ingest throughput.
  CREATE INDEX outbox_due ON outbox (sink, next_attempt_at, id) WHERE state = 'pending';
  CREATE INDEX outbox_dead ON outbox (sink, id) WHERE state = 'dead';

  CREATE TABLE conflicts (
    id                INTEGER PRIMARY KEY,
    dedup_key         TEXT    NOT NULL,
    origin            TEXT    NOT NULL,         -- 'ingest', or the sink that reported it
    stored_payload    TEXT    NOT NULL,         -- the version labgate keeps (or the sink holds)
    incoming_payload  TEXT    NOT NULL,         -- the version that differs
    incoming_digest   TEXT    NOT NULL,
    capture_id        INTEGER,
    reason            TEXT    NOT NULL,
    detected_at       INTEGER NOT NULL,
    occurrences       INTEGER NOT NULL DEFAULT 1,
    resolution        TEXT CHECK (resolution IN ('kept', 'forwarded')),
    resolved_by       TEXT,
    resolved_at       INTEGER
  );
  CREATE UNIQUE INDEX conflicts_identity ON conflicts (dedup_key, origin, incoming_digest);
  CREATE INDEX conflicts_open ON conflicts (id) WHERE resolution IS NULL;

  CREATE TABLE audit (
    id       INTEGER PRIMARY KEY,
    at       INTEGER NOT NULL,
    actor    TEXT    NOT NULL,                  -- 'gateway' or the operator
    action   TEXT    NOT NULL,
    subject  TEXT,                              -- dedup key, capture id, sink ...
    detail   TEXT                               -- JSON
  );
  -- No index on at: retention prunes by id, which follows time (retention.ts, auditStep).
  CREATE TRIGGER audit_append_only BEFORE UPDATE ON audit
  BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
  `,
  /* 2: outbox counts without a scan: conflict rows indexed, sent rows counted per sink */ `
  -- From here on a result's outbox rows have the ids results.id * 16 + slot (layout.ts): a result's
  -- delivery states are one rowid range and a row's result one rowid lookup, with no index on dedup_key to slow ingest.
  -- Partial, like outbox_dead: ingest inserts pending rows only, so neither index nor trigger costs it a write.
  CREATE INDEX outbox_conflict ON outbox (sink, id) WHERE state = 'conflict';
  -- Deliveries of the last hour (the page's rate and ETA) without reading every sent row; written when a row is marked
  -- sent, on the delivery side, never by ingest.
  -- Deliveries per sink and minute, for the recent rate (status page, labgate status): one row written per batch
  -- instead of an index entry per delivered row on the drain's hot path; minutes older than a day are dropped.
  CREATE TABLE outbox_sent_minutes (
    sink    TEXT    NOT NULL,
    minute  INTEGER NOT NULL,                -- epoch ms / 60000
    n       INTEGER NOT NULL,
    PRIMARY KEY (sink, minute)
  ) WITHOUT ROWID;

  -- Sent rows are nearly the whole table; counting them would scan it. Marking rows sent happens in one place
  -- (outbox.ts), which adds the batch's count with one statement; the triggers keep the count exact through every
  -- other path that leaves 'sent' or deletes a row (operators, corrections, retention). Rows are only ever inserted
  -- pending (ingest, corrections), so no insert trigger is needed, nor paid for by ingest.
  CREATE TABLE outbox_sent (
    sink  TEXT    PRIMARY KEY,
    n     INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO outbox_sent (sink, n) SELECT sink, COUNT(*) FROM outbox WHERE state = 'sent' GROUP BY sink;
  CREATE TRIGGER outbox_sent_out AFTER UPDATE OF state ON outbox WHEN old.state = 'sent' AND new.state <> 'sent'
  BEGIN UPDATE outbox_sent SET n = n - 1 WHERE sink = old.sink; END;
  CREATE TRIGGER outbox_sent_delete AFTER DELETE ON outbox WHEN old.state = 'sent'
  BEGIN UPDATE outbox_sent SET n = n - 1 WHERE sink = old.sink; END;
  `,
  /* 3: the analyzer's status letter, and a censored value's bound apart from its (now absent) value */
  keepStatusCodeAndBound,
  /* 4: per-instrument figures of each local day, kept by ingest (instrument-days.ts) */ `
  CREATE TABLE instrument_days (
    instrument_id    TEXT    NOT NULL,
    day              TEXT    NOT NULL,          -- the gateway's local calendar day, YYYY-MM-DD
    messages         INTEGER NOT NULL DEFAULT 0,
    results          INTEGER NOT NULL DEFAULT 0, -- results first stored (a replay adds none)
    rejected         INTEGER NOT NULL DEFAULT 0, -- results rejected on arrival
    last_message_at  INTEGER,                    -- epoch ms of that day's newest message
    PRIMARY KEY (instrument_id, day)
  ) WITHOUT ROWID;
  -- An upgraded gateway starts from what the journal and the results hold, so its first "today" is already true.
  -- SQLite's 'localtime' is the process's time zone, as localDay() is in JavaScript.
  INSERT INTO instrument_days (instrument_id, day, messages, rejected, last_message_at)
    SELECT instrument_id, date(received_at / 1000, 'unixepoch', 'localtime'), count(*),
      sum(coalesce(json_array_length(reasons), 0)), max(received_at)
    FROM captures GROUP BY 1, 2;
  INSERT INTO instrument_days (instrument_id, day, results)
    SELECT c.instrument_id, date(c.received_at / 1000, 'unixepoch', 'localtime'), count(*)
    FROM results r JOIN captures c ON c.id = r.capture_id WHERE true GROUP BY 1, 2
    ON CONFLICT (instrument_id, day) DO UPDATE SET results = excluded.results;
  `,
  /* 5: two-way: orders that reached an analyzer (each told to the LIMS once), and the query figures of each day */ `
  -- One row per order and instrument, written when the analyzer ACKed the message carrying it (never before): what was
  -- sent, so download mode sends each order once, and the dispatch the LIMS is told about, drained like an outbox row.
  CREATE TABLE dispatches (
    id               INTEGER PRIMARY KEY,
    order_id         TEXT    NOT NULL,
    instrument_id    TEXT    NOT NULL,
    accession        TEXT    NOT NULL,
    dispatched_at    INTEGER NOT NULL,          -- epoch ms of the analyzer's final ACK
    state            TEXT    NOT NULL CHECK (state IN ('pending', 'sent', 'dead')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER NOT NULL,          -- epoch ms
    last_error       TEXT,
    updated_at       INTEGER NOT NULL,
    UNIQUE (order_id, instrument_id)
  );
  CREATE INDEX dispatches_due ON dispatches (next_attempt_at, id) WHERE state = 'pending';
  CREATE INDEX dispatches_dead ON dispatches (id) WHERE state = 'dead';

  -- Per instrument and local day: queries, answers with orders, "no information" answers by reason, downloads sent.
  CREATE TABLE order_days (
    instrument_id  TEXT    NOT NULL,
    day            TEXT    NOT NULL,            -- the gateway's local calendar day, YYYY-MM-DD
    figure         TEXT    NOT NULL,            -- 'queries', 'answered-orders', 'no-information:<reason>', 'downloads', ...
    n              INTEGER NOT NULL,
    PRIMARY KEY (instrument_id, day, figure)
  ) WITHOUT ROWID;
  `,
  /* 6: the analyzer codes each instrument has sent, mapped or not, kept by ingest (instrument-codes.ts) */ `
  CREATE TABLE instrument_codes (
    instrument_id  TEXT    NOT NULL,
    code           TEXT    NOT NULL,          -- the analyzer's code as the driver extracts it
    seen           INTEGER NOT NULL,          -- results and rejections carrying it
    last_value     TEXT,                      -- the value text as sent, cut at 120 characters
    last_unit      TEXT,
    last_at        INTEGER NOT NULL,          -- epoch ms the message was received
    PRIMARY KEY (instrument_id, code)
  ) WITHOUT ROWID;
  -- An upgraded gateway lists the codes of what it already holds: its stored results, and the codes its rejected
  -- captures name (their values were not kept with the reasons).
  INSERT INTO instrument_codes (instrument_id, code, seen, last_value, last_unit, last_at)
    SELECT r.instrument_id, r.analyzer_code, count(*), r.value_text, r.unit, max(c.received_at)
    FROM results r JOIN captures c ON c.id = r.capture_id WHERE r.analyzer_code <> '' GROUP BY 1, 2;
  INSERT INTO instrument_codes (instrument_id, code, seen, last_at)
    SELECT c.instrument_id, json_extract(j.value, '$.analyzerCode'), count(*), max(c.received_at)
    FROM captures c, json_each(c.reasons) j
    WHERE c.status = 'rejected' AND json_extract(j.value, '$.analyzerCode') IS NOT NULL GROUP BY 1, 2
    ON CONFLICT (instrument_id, code) DO UPDATE SET seen = seen + excluded.seen, last_at = max(last_at, excluded.last_at);
  `,
  /* 7: the day at a glance: per-instrument figures per hour (instrument-days.ts), sinks' backlog samples (sink-figures.ts) */ `
  CREATE TABLE instrument_hours (
    instrument_id  TEXT    NOT NULL,
    hour           INTEGER NOT NULL,          -- epoch ms / 3600000
    messages       INTEGER NOT NULL DEFAULT 0,
    results        INTEGER NOT NULL DEFAULT 0, -- results first stored
    rejected       INTEGER NOT NULL DEFAULT 0, -- results rejected on arrival
    PRIMARY KEY (instrument_id, hour)
  ) WITHOUT ROWID;
  CREATE TABLE sink_backlog (
    sink     TEXT    NOT NULL,
    slot     INTEGER NOT NULL,                -- epoch ms / 300000: one sample per sink and five minutes
    at       INTEGER NOT NULL,                -- epoch ms of the sample
    pending  INTEGER NOT NULL,
    PRIMARY KEY (sink, slot)
  ) WITHOUT ROWID;
  -- An upgraded gateway charts its last two days from the journal and the results, as the day figures were filled.
  INSERT INTO instrument_hours (instrument_id, hour, messages, rejected)
    SELECT instrument_id, received_at / 3600000, count(*), sum(coalesce(json_array_length(reasons), 0))
    FROM captures WHERE received_at >= (unixepoch() - 2 * 86400) * 1000 GROUP BY 1, 2;
  INSERT INTO instrument_hours (instrument_id, hour, results)
    SELECT c.instrument_id, c.received_at / 3600000, count(*)
    FROM results r JOIN captures c ON c.id = r.capture_id WHERE c.received_at >= (unixepoch() - 2 * 86400) * 1000 GROUP BY 1, 2
    ON CONFLICT (instrument_id, hour) DO UPDATE SET results = excluded.results;
  `,
  /* 8: the gateway's steady time (steady-time.ts): due times that survive a step of the wall clock, and the steps seen */ `
  CREATE TABLE steady_time (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    steady_at  INTEGER NOT NULL,              -- the steady time (ms) at ...
    wall_at    INTEGER NOT NULL               -- ... this wall time (epoch ms): written at start and after a step
  );
  CREATE TABLE clock_steps (
    id         INTEGER PRIMARY KEY,
    steady_at  INTEGER NOT NULL,              -- when the step was seen, in steady time
    wall_at    INTEGER NOT NULL,              -- the wall time just after it
    step_ms    INTEGER NOT NULL               -- how far the wall clock moved beyond the time that passed (negative: back)
  );
  `,
  /* 9: the configuration's changes from the status page, read back without scanning every result's audit entry */ `
  CREATE INDEX audit_configuration ON audit (id) WHERE action GLOB 'config-*';
  `,
  /* 10: a result's provenance stored once, in its payload (stored-result.ts) */ `
  -- Nothing to rewrite: rows stored before keep results.source, and a first insert from here on leaves it '' and the
  -- payload's result.source is read instead. The new number is for an older labgate, which would read '' as JSON: it
  -- refuses this store (STORE_SCHEMA_NEWER) instead.
  `,
  /* 11: a sink's sent count is outbox_sent.n plus its minutes in outbox_sent_minutes, so a marked batch writes one counter page */ `
  -- A batch marked sent adds its count to its minute only; a minute forgotten (older than a day and an hour) folds its
  -- count into outbox_sent then, so the sum stays exact. outbox_sent's triggers (migration 2) still take off a row
  -- that leaves 'sent' or is deleted, from n, which may so go below zero while the minutes hold the deliveries.
  UPDATE outbox_sent SET n = n - coalesce((SELECT sum(m.n) FROM outbox_sent_minutes m WHERE m.sink = outbox_sent.sink), 0);
  CREATE TRIGGER outbox_sent_minutes_fold AFTER DELETE ON outbox_sent_minutes
  BEGIN INSERT INTO outbox_sent (sink, n) VALUES (old.sink, old.n) ON CONFLICT (sink) DO UPDATE SET n = n + excluded.n; END;
  `,
];
