// Two-way options in the configuration: the defaults, and what a two-way instrument needs.
import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { astmOptionsSchema } from '../../drivers/astm/options.js';
import { hl7OptionsSchema } from '../../drivers/hl7/options.js';

const two = (options: string, sinks = 'sinks: {lims: {baseUrl: "http://127.0.0.1:9", auth: {kind: static, tokenFile: /t}}}') => `
gateway: {id: gw1}
instruments:
  - {id: chem1, driver: astm, timezone: UTC, transport: {kind: serial, path: /dev/serial/by-id/a}, options: ${options}}
${sinks}
`;

describe('two-way configuration', () => {
  it('is off by default, with the standard answers', () => {
    expect(astmOptionsSchema.parse({}).orders).toEqual({
      query: false,
      download: false,
      queryTimeoutMs: 10_000,
      maxSpecimensPerQuery: 100,
      lookupsInFlight: 4,
      pollIntervalMs: 30_000,
      specimenComponent: 2,
      actionCode: 'N',
      terminationCode: 'N',
      noInformation: { answer: 'terminator', actionCode: 'C' },
      patient: false,
    });
  });

  it('a two-way instrument with the LIMS configured is valid; ordersPath defaults to /orders', () => {
    const r = parseConfigText(two('{orders: {query: true, download: true}}'));
    expect(r.kind).toBe('ok');
    expect(r.kind === 'ok' && r.config.sinks.lims?.ordersPath).toBe('/orders');
  });

  it('needs the LIMS and the link layer, and says so with the path', () => {
    const r = parseConfigText(two('{framing: none, orders: {query: true}}', ''));
    expect(r.kind === 'invalid' && r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'instruments[0].options.orders: query and download modes read the orders from the LIMS: configure sinks.lims (enabled)',
      'instruments[0].options.orders: query and download modes send to the analyzer over the LIS01-A2 link layer: they need framing: link',
    ]);
  });

  it('refuses a misspelt option and an impossible deadline', () => {
    expect(astmOptionsSchema.safeParse({ orders: { qurey: true } }).success).toBe(false);
    expect(astmOptionsSchema.safeParse({ orders: { queryTimeoutMs: 10 } }).success).toBe(false);
    expect(astmOptionsSchema.safeParse({ orders: { noInformation: { answer: 'order', actionCode: 'cancel' } } }).success).toBe(false);
  });

  it('HL7: the same keys, with the dialect and what its messages carry; the LIMS needed; download only in the LAW dialect', () => {
    expect(hl7OptionsSchema.parse({}).orders).toEqual({
      query: false,
      download: false,
      queryTimeoutMs: 10_000,
      maxSpecimensPerQuery: 100,
      lookupsInFlight: 4,
      pollIntervalMs: 30_000,
      patient: false,
      dialect: 'display-query',
      ackTimeoutMs: 10_000,
      specimenType: '',
      codingSystem: '',
      orderPort: null,
    });
    expect(hl7OptionsSchema.safeParse({ orders: { orderPort: { host: 'analyzer.lab', port: 0 } } }).success).toBe(false);
    const hl7 = (options: string, sinks?: string) => two(options, sinks).replace('driver: astm', 'driver: hl7');
    expect(parseConfigText(hl7('{framing: none, orders: {query: true, download: true, dialect: law}}')).kind).toBe('ok');
    const noLims = parseConfigText(hl7('{orders: {query: true}}', ''));
    expect(noLims.kind === 'invalid' && noLims.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'instruments[0].options.orders: query and download modes read the orders from the LIMS: configure sinks.lims (enabled)',
    ]);
    const download = parseConfigText(hl7('{orders: {download: true}}'));
    expect(download.kind === 'invalid' && download.problems.map((p) => p.message).join()).toMatch(/OML\^O33, an IHE LAW message: it needs dialect: law/);
    expect(hl7OptionsSchema.safeParse({ orders: { dialect: 'astm' } }).success).toBe(false);
  });
});
