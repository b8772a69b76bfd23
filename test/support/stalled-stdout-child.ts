// A gateway's logger whose stdout nobody reads (journald stalled or restarting): logs about 100 MB of lines, then
// writes its memory figures to FILE and waits to be killed. Test-only (dist/test/support/):
//   node dist/test/support/stalled-stdout-child.js FILE
import { writeFileSync } from 'node:fs';
import { createLogger } from '../../src/logger.js';

const file = process.argv[2]!;
const log = createLogger({ level: 'info' });
const filler = 'x'.repeat(1000);
for (let round = 0; round < 100; round++) {
  for (let i = 0; i < 1000; i++) log.info({ filler, round, i }, 'flood');
  await new Promise((resolve) => setImmediate(resolve));
}
const { heapUsed, external, rss } = process.memoryUsage();
writeFileSync(file, JSON.stringify({ heapUsedMb: heapUsed / 2 ** 20, externalMb: external / 2 ** 20, rssMb: rss / 2 ** 20 }));
setInterval(() => {}, 60_000);
