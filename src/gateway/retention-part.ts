// The gateway's retention part: prunes what the configured retention lets go (delivered results, the audit log's old
// days, rejected captures over their budget) on its own timer; undelivered results are never pruned.
import type { Config } from '../config/schema.js';
import { Retention } from '../store/retention.js';
import type { Store } from '../store/store.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Part } from './lifecycle.js';

/** Starts retention on the open store with the configuration's periods. */
export class RetentionPart implements Part {
  readonly name = 'retention';
  retention: Retention | undefined;

  constructor(
    private readonly running: { gateway: () => Config['gateway']; store: () => Store },
    private readonly deps: Pick<GatewayDeps, 'clock' | 'log' | 'retentionFirstRunMs'>,
  ) {}

  start(): void {
    const { deps } = this;
    const store = this.running.store();
    this.retention = new Retention({
      db: store.db,
      clock: deps.clock,
      steady: store.steady,
      ...this.running.gateway().retention,
      ...(deps.retentionFirstRunMs ? { firstRunDelayMs: deps.retentionFirstRunMs } : {}),
      log: deps.log.child({ part: 'retention' }),
    });
    this.retention.start();
  }

  stop(): void {
    this.retention?.stop();
  }
}
