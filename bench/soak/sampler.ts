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
  /** Where resident anonymous memory lives (smaps): malloc's main arena, other malloc arenas, everything else (V8's pages, threads' stacks, large mallocs). */
  anon: AnonSplit;
  /** What V8 has reserved per space (new, old, code, large_object, ...), MB. */
  spacesMb: Record<string, number>;
  walBytes: number;
  loopP99Ms: number;
  /** The delay's minimum in the same window: prom-client's histogram counts its 100 ms sampling interval in. */
  loopMinMs: number;
  /** Both sinks up and every cable plugged for a while: the sample whose descriptors compare with the others'. */
  steady: boolean;
}

/** Resident anonymous memory by where it lives, MB. */
export interface AnonSplit {
  brk: number;
  arenas: number;
  other: number;
}

/**
 * Splits /proc/PID/smaps's anonymous resident memory: the `[heap]` mapping is glibc malloc's main arena; a thread's
 * arena is a 64 MiB mapping (reserved, partly committed, the rest PROT_NONE) that sits alone; the rest is V8's pages,
 * stacks and allocations above malloc's mmap threshold.
 */
export function anonSplit(smaps: string): AnonSplit {
  const split = { brk: 0, arenas: 0, other: 0 };
  let kind: keyof AnonSplit = 'other';
  const arenaBytes = 64 * 2 ** 20;
  for (const line of smaps.split('\n')) {
    const header = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const start = parseInt(header[1]!, 16);
      const end = parseInt(header[2]!, 16);
      const name = header[3]!;
      // An arena is 64 MiB aligned: its committed part and its PROT_NONE rest are two adjacent mappings.
      kind = name === '[heap]' ? 'brk' : name === '' && start % arenaBytes === 0 && end - start <= arenaBytes ? 'arenas' : 'other';
      continue;
    }
    const anon = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (anon) split[kind] += Number(anon[1]) / 1024;
  }
  return split;
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
    anon: anonSplit(readFileSync(`/proc/${pid}/smaps`, 'utf8')),
    spacesMb: spaces(text),
    walBytes,
    loopP99Ms: metric(text, 'labgate_nodejs_eventloop_lag_p99_seconds') * 1000,
    loopMinMs: metric(text, 'labgate_nodejs_eventloop_lag_min_seconds') * 1000,
  };
}

/** V8's reserved size per heap space from the process metrics, MB. */
function spaces(text: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const m of text.matchAll(/^labgate_nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)$/gm)) found[m[1]!] = Number(m[2]) / 2 ** 20;
  return found;
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
