// The gateway's own figures for /metrics, read when it is scraped: each running instrument's last message (the
// store's, which survives a restart, or the port's when the store has none yet), the disk guard's last measurement
// and the size of the store's write-ahead log.
import { statSync } from 'node:fs';
import type { ClockSync } from '../clock-sync.js';
import type { DiskGuard } from '../disk-guard.js';
import type { GatewayFigures } from '../metrics.js';
import { localDay } from '../store/instrument-days.js';
import type { Store } from '../store/store.js';
import type { PortStatus } from '../transport/supervisor.js';

export interface GatewayFigureParts {
  store: Pick<Store, 'instrumentFigures' | 'db'>;
  now: () => number;
  instruments: () => PortStatus[];
  disk: () => Pick<DiskGuard, 'status'> | undefined;
  /** Whether the wall clock is synchronised (the clock part). */
  clock?: () => ClockSync;
}

/** The source Metrics.setGatewaySource reads. */
export function gatewayFigures(parts: GatewayFigureParts): () => GatewayFigures {
  return () => {
    const stored = new Map(parts.store.instrumentFigures(localDay(parts.now())).map((f) => [f.instrumentId, f.lastMessageAt]));
    const lastMessages = parts.instruments().flatMap((status) => {
      // The port's time survives a step of the wall clock; the store's a restart.
      const at = status.lastMessageAt ?? stored.get(status.instrument) ?? 0;
      return at > 0 ? [{ instrument: status.instrument, at }] : [];
    });
    const disk = parts.disk()?.status();
    return {
      lastMessages,
      ...(disk ? { disk: { freeBytes: disk.freeBytes, floorBytes: disk.floorBytes, accepting: disk.accepting } } : {}),
      walBytes: walBytes(parts.store.db.name),
      ...(parts.clock ? { clockSynchronised: parts.clock().state === 'synchronised' } : {}),
    };
  };
}

/** Bytes of a SQLite database's write-ahead log; 0 when there is none. */
export function walBytes(databasePath: string): number {
  return statSync(`${databasePath}-wal`, { throwIfNoEntry: false })?.size ?? 0;
}
