import { expect, it } from 'vitest';
import { validateConfig } from '../../src/config/load.js';
import { drainPolicy } from '../../src/delivery/drains.js';

it('paces each drain from the delivery section and the sink batch size', () => {
  const result = validateConfig({
    gateway: { id: 'gw-1' },
    sinks: { postgres: { url: 'postgres://loader@db/lab', batchSize: 250 } },
    delivery: { backoff: { baseMs: 500, capMs: 60_000 }, probeIntervalMs: 5_000, failureThreshold: 3, inFlight: 3 },
  });
  if (result.kind !== 'ok') throw new Error(JSON.stringify(result.problems));
  expect(drainPolicy(result.config, 'postgres')).toEqual({
    backoff: { baseMs: 500, capMs: 60_000 },
    probeIntervalMs: 5_000,
    failureThreshold: 3,
    inFlight: 3,
    batchSize: 250,
  });
  expect(drainPolicy(validDefaults(), 'lims').failureThreshold).toBe(5);
  expect(result.config.sinks.postgres).toMatchObject({ schema: 'public', connectTimeoutMs: 10_000, statementTimeoutMs: 30_000 });
});

function validDefaults(): Parameters<typeof drainPolicy>[0] {
  const result = validateConfig({ gateway: { id: 'gw-1' } });
  if (result.kind !== 'ok') throw new Error(JSON.stringify(result.problems));
  return result.config;
}
