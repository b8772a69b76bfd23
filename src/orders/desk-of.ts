// One two-way instrument's order desk, built alike for every driver from its runner's context and its orders options.
import type { DriverContext } from '../runner-contract.js';
import { OrderDesk } from './desk.js';
import type { CommonOrdersOptions } from './options.js';

/** The desk of the context's instrument; the context must carry the orders port (a LIMS is configured). */
export function orderDeskOf(ctx: DriverContext, options: CommonOrdersOptions): OrderDesk {
  if (!ctx.orders) throw new Error('two-way instrument without an orders port');
  return new OrderDesk({
    instrumentId: ctx.profile.id,
    // Read at each query, so a reload's new mapping reaches the next one.
    get mapping() {
      return ctx.profile.mapping;
    },
    queryTimeoutMs: options.queryTimeoutMs,
    maxSpecimens: options.maxSpecimensPerQuery,
    lookupsInFlight: options.lookupsInFlight,
    clock: ctx.clock,
    log: ctx.log,
    ...ctx.orders,
    onFigure: (figure, answeredInMs) => ctx.onEvent({ kind: 'orders', figure, ...(answeredInMs === undefined ? {} : { answeredInMs }) }),
  });
}
