// The sink contract against the FHIR sink and the FHIR test server.
import { FhirTestServer } from '../../src/fhir-server/server.js';
import { createFhirSink } from '../../src/sinks/fhir.js';
import { captureLog } from '../lims/harness.js';
import { sinkOptions, SYSTEMS } from '../fhir/harness.js';
import { sinkContract } from './contract.js';

sinkContract('FHIR', async () => {
  const server = new FhirTestServer();
  await server.start();
  const sink = createFhirSink(sinkOptions(server.url), { now: Date.now, log: captureLog() });
  return {
    sink,
    name: 'fhir',
    refuse: async (row) => server.configure({ rejectIdentifiers: [...server.faults().rejectIdentifiers, row.dedupKey] }),
    held: async (row) => {
      const found = await server.byIdentifier(SYSTEMS.identifierSystem, row.dedupKey);
      return { count: found.length, value: found[0]?.valueQuantity?.value ?? null };
    },
    outage: async (down) => server.configure({ outage: down }),
    close: async () => {
      await sink.close();
      await server.stop();
    },
  };
});
