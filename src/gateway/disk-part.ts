// The gateway's disk part: the guard that refuses messages before the data directory's file system is full.
import type { Config } from '../config/schema.js';
import { DiskGuard } from '../disk-guard.js';
import type { Store } from '../store/store.js';
import { growthAhead } from '../store/wal-bound.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { Part } from './lifecycle.js';

/** Measures free space once before the instruments start, then on its interval. */
export class DiskPart implements Part {
  readonly name = 'disk';
  guard: DiskGuard | undefined;

  constructor(
    private readonly gateway: () => Config['gateway'],
    private readonly deps: Pick<GatewayDeps, 'clock' | 'log' | 'statfs' | 'diskIntervalMs'>,
    /** The store whose files may still grow without a commit (its WAL, its checkpoints); none: nothing is reserved. */
    private readonly storePart: { readonly store: Store | undefined } = { store: undefined },
  ) {}

  async start(): Promise<void> {
    const { deps } = this;
    const gateway = this.gateway();
    this.guard = new DiskGuard({
      path: gateway.dataDir,
      floorBytes: gateway.diskFloorMb * 1024 * 1024,
      clock: deps.clock,
      log: deps.log.child({ part: 'disk' }),
      reserved: () => {
        const store = this.storePart.store;
        return store ? growthAhead(store.db) : 0;
      },
      ...(deps.statfs ? { statfs: deps.statfs } : {}),
      ...(deps.diskIntervalMs ? { intervalMs: deps.diskIntervalMs } : {}),
    });
    await this.guard.check();
    this.guard.start();
  }

  stop(): void {
    this.guard?.stop();
  }

  /** Charges a commit against the guard's estimate of free space (DiskGuard.charge). */
  charge(bytes: number): void {
    this.guard?.charge(bytes);
  }

  /** True unless the guard has seen free space below the floor (and not yet back above it with its margin). */
  accepting(): boolean {
    return this.guard?.accepting() ?? true;
  }
}
