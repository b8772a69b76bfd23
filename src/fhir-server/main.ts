// Runs the FHIR test server as its own process (the end-to-end tests and the bench, where it must not share the
// sink's event loop). argv[2]: JSON of FhirServerOptions. Prints one JSON line with the base and token URLs.
import { FhirTestServer, type FhirServerOptions } from './server.js';

const server = new FhirTestServer(JSON.parse(process.argv[2] ?? '{}') as FhirServerOptions);
await server.start();
process.stdout.write(JSON.stringify({ url: server.url, tokenUrl: server.tokenUrl }) + '\n');

const stop = (): void => {
  void server.stop().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
