// Two-way wiring: the LIMS orders client every two-way instrument asks through, the store's ledger of what analyzers
// hold, and the drain that tells the LIMS each dispatch. Built only when an ASTM or HL7 instrument asks for query or download
// mode and the LIMS is configured; one bearer token serves results, orders and dispatches alike.
import type { Clock } from '../clock.js';
import { steadyClock } from '../store/steady-time.js';
import type { Config } from '../config/schema.js';
import { twoWayInstruments } from '../config/two-way-checks.js';
import { DISPATCH_SINK } from '../delivery/dispatch-contract.js';
import { Drain } from '../delivery/drain.js';
import { drainPolicy } from '../delivery/drains.js';
import { sinkLogger, type Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { OrdersPort } from '../orders/desk.js';
import { createDispatchSink } from '../sinks/lims-dispatch.js';
import { createOrdersClient, ordersEndpoint, type OrdersClient } from '../sinks/lims-orders.js';
import type { TokenProvider } from '../sinks/lims-token.js';
import type { Store } from '../store/store.js';
import type { SinkHealth } from '../delivery/sink-health.js';
import { recordDeliveryMetrics } from './delivery-metrics.js';

/** Connections of the orders client: lookups an analyzer waits for never queue behind each other for long. */
const LOOKUP_CONNECTIONS = 4;

/** True when an enabled ASTM or HL7 instrument answers queries or downloads orders. */
export function wantsTwoWay(config: Config): boolean {
  return twoWayInstruments(config).size > 0;
}

/** Running two-way parts: what the instruments' runners get, and the dispatch drain. */
export interface TwoWay {
  port: OrdersPort;
  /** The dispatch drain (its status on the page, a wake after an operator's retry). */
  drain: Drain;
  health(now: number): SinkHealth;
  stop(): Promise<void>;
}

/** Starts the orders client and the dispatch drain, or returns undefined when no instrument is two-way. */
export function startTwoWay(
  config: Config,
  deps: { store: Store; tokens: TokenProvider | undefined; clock: Clock; random: () => number; log: Logger; metrics: Metrics },
): TwoWay | undefined {
  const lims = config.sinks.lims;
  if (!wantsTwoWay(config) || !lims?.enabled || !deps.tokens) return undefined;
  const { store, clock } = deps;
  const client: OrdersClient = createOrdersClient({
    ...ordersEndpoint(lims, deps.tokens, LOOKUP_CONNECTIONS),
    overCap: () => deps.metrics.answerOverCap('lims-orders'),
  });
  const dispatchEndpoint = { ...ordersEndpoint(lims, deps.tokens, 1), overCap: () => deps.metrics.answerOverCap('lims-dispatch') };
  const drain = new Drain({
    sink: createDispatchSink(dispatchEndpoint, clock.now),
    outbox: store.orders.dispatches,
    policy: drainPolicy(config, DISPATCH_SINK),
    clock: steadyClock(clock, store.steady),
    random: deps.random,
    log: sinkLogger(deps.log, DISPATCH_SINK),
    onOutcomes: (rows, outcomes, now) => recordDeliveryMetrics(deps.metrics, DISPATCH_SINK, rows, outcomes, now),
  });
  store.orders.dispatches.resetInFlight();
  drain.start();
  const ledger: OrdersPort['ledger'] = {
    recordSent: (instrumentId, orders, at, purpose) => {
      const added = store.orders.recordSent(instrumentId, orders, at, purpose);
      if (added > 0) drain.notify();
      return added;
    },
    sentOf: (instrumentId, ids) => store.orders.sentOf(instrumentId, ids),
    count: (instrumentId, at, figure) => store.orders.count(instrumentId, at, figure),
  };
  return {
    port: { source: client, ledger },
    drain,
    health: (now) => dispatchHealth(store, drain, now),
    stop: async () => {
      await drain.stop();
      await Promise.allSettled([client.close(), dispatchEndpoint.close()]);
    },
  };
}

function dispatchHealth(store: Store, drain: Drain, now: number): SinkHealth {
  const c = store.orders.dispatches.counts();
  const status = drain.status();
  return {
    sink: DISPATCH_SINK,
    pending: c.pending,
    oldestAgeSeconds: c.oldestPendingAt === null ? 0 : Math.round(store.steady.ageMs(c.oldestPendingAt, now) / 1000),
    dead: c.dead,
    conflicts: 0,
    circuit: status.circuit,
    ...(status.lastError && status.circuit !== 'closed' ? { reason: status.lastError } : {}),
  };
}
