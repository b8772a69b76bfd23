// The `sinks.fhir` section (defaults, secrets only as files, UCUM overrides checked) and the store's side of
// quality-control results: outbox rows only for the sinks configured to take them.
import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/schema.js';
import { enabledSinkNames, qcSinkNames } from '../../src/gateway/sinks.js';
import { message, result, scratchPerTest } from '../store/store-fixtures.js';

const base = { gateway: { id: 'gw1' } };

describe('sinks.fhir', () => {
  it("fills in labgate's naming systems and SMART Backend Services defaults", () => {
    const config = configSchema.parse({
      ...base,
      sinks: {
        fhir: {
          baseUrl: 'https://ehr.example/fhir/R4',
          auth: { kind: 'smart-backend', tokenUrl: 'https://ehr.example/token', clientId: 'gw1', privateKeyFile: '/run/credentials/k', keyId: 'k1' },
        },
      },
    });
    expect(config.sinks.fhir).toMatchObject({
      enabled: true,
      createMode: 'auto',
      identifierSystem: 'urn:labgate:dedup-key',
      specimenSystem: 'urn:labgate:accession',
      qc: false,
      batchSize: 50,
      auth: { algorithm: 'ES384', scope: 'system/Observation.write' },
    });
    expect(enabledSinkNames(config)).toEqual(['fhir']);
    expect(qcSinkNames(config)).toEqual([]);
  });

  it('refuses a secret in the YAML, a naming system that is no URI, a UCUM override that is not UCUM', () => {
    const parsed = configSchema.safeParse({
      ...base,
      sinks: {
        fhir: {
          baseUrl: 'https://ehr.example/fhir',
          specimenSystem: 'accession numbers',
          ucumUnits: { 'x10^3/uL': '10^3/ul x' },
          auth: { kind: 'oauth2', tokenUrl: 'https://ehr.example/token', clientId: 'gw1', clientSecret: 'hunter2' },
        },
      },
    });
    expect(parsed.success).toBe(false);
    const paths = parsed.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['sinks.fhir.specimenSystem', 'sinks.fhir.ucumUnits.x10^3/uL']));
    expect(JSON.stringify(parsed.error!.issues)).toMatch(/clientSecretFile|clientSecret/);
  });
});

describe('quality-control results in the store', () => {
  const scratch = scratchPerTest();

  it('a QC result gets an outbox row only for the sinks that take QC; a patient result one for every sink', () => {
    const store = scratch().open({ sinks: ['postgres', 'lims', 'fhir'], qcSinks: ['fhir'] });
    store.ingest(message([result(1), result(2, { qc: true })]));
    const rows = store.db.prepare('SELECT r.accession, o.sink FROM outbox o JOIN results r ON r.dedup_key = o.dedup_key ORDER BY o.id').all();
    expect(rows).toEqual([
      { accession: 'A101', sink: 'postgres' },
      { accession: 'A101', sink: 'lims' },
      { accession: 'A101', sink: 'fhir' },
      { accession: 'A102', sink: 'fhir' },
    ]);
  });

  it('without QC sinks a QC result is kept and forwarded nowhere, as before', () => {
    const store = scratch().open({ sinks: ['postgres', 'fhir'] });
    store.ingest(message([result(2, { qc: true })]));
    expect(store.db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
    expect(store.db.prepare('SELECT count(*) FROM results').pluck().get()).toBe(1);
  });
});
