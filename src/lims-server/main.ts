// Runs the LIMS test server as its own process (the demo, and the bench, where it must not share the sink's
// event loop). argv[2]: JSON of LimsServerOptions (faults, port, clients...). Prints one JSON line with the URL.
import { createLimsServer, type LimsServerOptions } from './server.js';

const options = JSON.parse(process.argv[2] ?? '{}') as LimsServerOptions;
const server = createLimsServer(options);
await server.start();
process.stdout.write(JSON.stringify({ url: server.url }) + '\n');

const stop = (): void => {
  void server.stop().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
