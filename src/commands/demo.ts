// `labgate demo`: the whole pipeline on one machine with nothing installed (src/demo/). The composition root of
// the demo: reads the arguments, owns the terminal and the exit code, and stops everything it started.
import type { Command } from './command.js';
import { commandArgs, configOption } from './args.js';
import { LabgateError } from '../errors.js';
import { DemoEnvironment } from '../demo/demo-environment.js';
import { runScenario, type DemoRun } from '../demo/demo-scenario.js';
import { summarize } from '../demo/demo-summary.js';

const help = `Usage: labgate demo [--fhir] [--keep] [--stay] [--config FILE]

Runs labgate end to end on this machine: an emulated ASTM chemistry analyzer on a virtual serial line, the
gateway with its store in a temporary directory, an embedded PostgreSQL (PGlite) as the central database and the
LIMS test server. Injects a corrupted frame, a LIMS outage and a crash of the gateway mid-delivery, has the analyzer
ask which tests two specimens need (a host query answered from the LIMS's orders), then proves that every result
arrived exactly once in both. Configuration: config/demo.yaml. Exit code 0 when it did.

  --fhir   also deliver to the FHIR test server as R4 Observations (SMART Backend Services auth), with its own outage
           and the same proof of exactly once (needs the development dependencies: run from a checkout after npm ci)
  --keep   keep the temporary directory (store, gateway.log) and print where it is
  --stay   after the summary, keep the gateway and its status page running until Ctrl-C
  --config a variant of config/demo.yaml (the same run-time values are filled in)`;

export const command: Command = async (args, io) => {
  const { values } = commandArgs({ args, options: { ...configOption, keep: { type: 'boolean' }, stay: { type: 'boolean' }, fhir: { type: 'boolean' } } }, help);
  if (values.help) {
    io.stdout.write(help + '\n');
    return 0;
  }
  const say = (line: string): void => void io.stdout.write(line + '\n');
  const started = Date.now();
  say(
    `labgate demo: an emulated analyzer → the gateway → central PostgreSQL${values.fhir ? ', the LIMS and a FHIR server' : ' and the LIMS'}, all on this machine`,
  );
  say('  setting up: embedded PostgreSQL (PGlite: a few seconds), LIMS test server, virtual serial line, temporary store');
  say('');
  let env: DemoEnvironment;
  try {
    env = await DemoEnvironment.start({ keep: values.keep ?? false, fhir: values.fhir ?? false, ...(values.config ? { configFile: values.config } : {}) });
  } catch (err) {
    if (err instanceof LabgateError) throw err;
    io.stderr.write(`labgate demo: FAILED: could not set up the demo: ${(err as Error).message}\n`);
    return 1;
  }
  let run: DemoRun | undefined;
  try {
    say(`  analyzer      ${env.instrument.id}, emulated ASTM chemistry analyzer on the virtual serial line ${env.line.path}`);
    say(`  gateway       store in ${env.config.gateway.dataDir}, logs in ${env.logFile}`);
    say(`  central DB    embedded PostgreSQL (PGlite) at ${env.central.url}, central schema migrated`);
    say(`  LIMS          test server at ${env.lims.url}${env.config.sinks.lims!.resourcePath}`);
    if (env.fhir) say(`  FHIR server   test server at ${env.fhir.server.url} (R4; SMART Backend Services, key ES384 registered as a JWKS)`);
    run = await runScenario(env, say);
    const verdict = summarize(run, await env.central.resultLoad(env.config.sinks.postgres!.schema), env.lims, env.fhir ? await env.fhir.census() : null);
    say('');
    for (const line of verdict.lines) say(line);
    say(`status page: ${run.gateway.httpUrl}/  (health: ${run.gateway.httpUrl}/healthz)${values.stay ? '' : ' while the demo runs; --stay keeps it up'}`);
    if (verdict.failures.length) {
      io.stderr.write(`labgate demo: FAILED: ${verdict.failures.join('; ')} (logs: ${env.logFile}, run with --keep to inspect)\n`);
      return 1;
    }
    say(`OK: every result arrived exactly once in ${env.fhir ? 'all three' : 'both'} sinks (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    if (values.stay) await untilInterrupted(say);
    return 0;
  } catch (err) {
    io.stderr.write(`labgate demo: FAILED: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await env.stop();
    if (values.keep) say(`kept ${env.dir}`);
  }
};

function untilInterrupted(say: (line: string) => void): Promise<void> {
  say('the gateway keeps running; Ctrl-C stops it');
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
