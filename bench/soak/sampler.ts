// What the soak watches in the gateway process every 10 s: resident memory and open descriptors from /proc, the
// V8 heap and the event-loop delay from its own /metrics (prom-client's process metrics; the delay's p99 is of the
// window since the previous scrape), and the size of the SQLite WAL file.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** One sample; `hours` since the run began. */
export interface Sample {
  hours: number;
  rssMb: number;
  /** RSS split: anonymous (V8's heap, malloc: SQLite's page cache) and file-backed (node's own code). */
  rssAnonMb: number;
  rssFileMb: number;
  heapMb: number;
  /** What V8 has reserved for the heap, used or not. */
  heapTotalMb: number;
  externalMb: number;
  fds: number;
  walBytes: number;
  loopP99Ms: number;
  /** The delay's minimum in the same window: prom-client's histogram counts its 100 ms sampling interval in. */
  loopMinMs: number;
  /** Both sinks up and every cable plugged for a while: the sample whose descriptors compare with the others'. */
  steady: boolean;
}

/** A metric's value from Prometheus text exposition (the first series of that name), or NaN. */
export function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

/** Reads one sample of process `pid`, serving /metrics on `httpPort`, whose store is in `dataDir`. */
export async function sample(pid: number, httpPort: number, dataDir: string, hours: number): Promise<Omit<Sample, 'steady'>> {
  const res = await fetch(`http://127.0.0.1:${httpPort}/metrics`, { signal: AbortSignal.timeout(5_000) });
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
  const text = await res.text();
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]) / 1024;
  let walBytes = 0;
  try {
    walBytes = statSync(join(dataDir, 'labgate.db-wal')).size;
  } catch {
    // No WAL file between a truncating checkpoint and the next write.
  }
  return {
    hours,
    rssMb: kb('VmRSS'),
    rssAnonMb: kb('RssAnon'),
    rssFileMb: kb('RssFile'),
    heapMb: metric(text, 'labgate_nodejs_heap_size_used_bytes') / 2 ** 20,
    heapTotalMb: metric(text, 'labgate_nodejs_heap_size_total_bytes') / 2 ** 20,
    externalMb: metric(text, 'labgate_nodejs_external_memory_bytes') / 2 ** 20,
    fds: readdirSync(`/proc/${pid}/fd`).length,
    walBytes,
    loopP99Ms: metric(text, 'labgate_nodejs_eventloop_lag_p99_seconds') * 1000,
    loopMinMs: metric(text, 'labgate_nodejs_eventloop_lag_min_seconds') * 1000,
  };
}

/** Polls the status page and /healthz as a browser and a monitor would; counts answers and failures. */
export class Poller {
  readonly counts = { pages: 0, failures: 0 };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly httpPort: number) {}

  start(everyMs: number): void {
    this.timer = setInterval(() => void this.poll(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    for (const path of ['/', '/healthz']) {
      try {
        const res = await fetch(`http://127.0.0.1:${this.httpPort}${path}`, { signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        // /healthz answers 503 while a sink is down: that is its job, not a failure to answer.
        if (res.status >= 500 && path === '/') this.counts.failures++;
        else this.counts.pages++;
      } catch {
        this.counts.failures++;
      }
    }
  }
}
