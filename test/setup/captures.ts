// vitest globalSetup: when the capture corpus is missing and not required, says so once more after the run, so a
// fresh clone's green run never hides that the real-capture suites did not run (test/fixtures/capture-corpus.ts).
import { captureCorpus } from '../fixtures/capture-corpus.js';

/** Nothing to start; the teardown prints the notice. */
export default function setup(): () => void {
  return () => {
    const corpus = captureCorpus();
    if (corpus.found || corpus.required) return;
    process.stdout.write(
      `\n*** The real-capture suites (test/astm, test/hl7, test/line captures.test.ts) were SKIPPED: no capture corpus at ${corpus.root}; ${corpus.why}. ***\n\n`,
    );
  };
}
