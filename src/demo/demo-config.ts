// config/demo.yaml with the values only known at run time filled in (the temporary data directory and the
// addresses of the embedded PostgreSQL and the LIMS test server), validated like any configuration file.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { validateConfig } from '../config/load.js';
import { formatProblems } from '../config/problem.js';
import type { Config } from '../config/schema.js';
import { LabgateError } from '../errors.js';

/** What the demo decides at run time. */
export interface DemoRuntime {
  dataDir: string;
  postgresUrl: string;
  limsUrl: string;
  limsSecretFile: string;
  /** With `--fhir`: the FHIR test server's base and token URLs and the gateway's private key file. */
  fhir?: { url: string; tokenUrl: string; keyFile: string };
}

/** config/demo.yaml of this checkout or package (found from src/demo and from dist/src/demo alike). */
export function demoConfigPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'config', 'demo.yaml');
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new LabgateError('CONFIG_UNREADABLE', 'config/demo.yaml not found beside the labgate installation');
}

/** Reads the demo configuration, fills in the run-time values and validates the result. */
export function loadDemoConfig(file: string, runtime: DemoRuntime): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabgateError('CONFIG_UNREADABLE', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) throw new LabgateError('CONFIG_INVALID', `${file} is not valid YAML: ${doc.errors[0]!.message}`);
  const raw = (doc.toJS() ?? {}) as { gateway?: Record<string, unknown>; sinks?: Record<string, Record<string, unknown> | undefined> };
  const { postgres, lims } = raw.sinks ?? {};
  if (!raw.gateway || !postgres || !lims) {
    throw new LabgateError('CONFIG_INVALID', `${file} needs gateway, sinks.postgres and sinks.lims sections`);
  }
  raw.gateway['dataDir'] = runtime.dataDir;
  postgres['url'] = runtime.postgresUrl;
  lims['baseUrl'] = runtime.limsUrl;
  lims['auth'] = { ...(lims['auth'] as object), tokenUrl: `${runtime.limsUrl}/oauth/token`, clientSecretFile: runtime.limsSecretFile };
  const fhir = raw.sinks?.fhir;
  if (runtime.fhir && !fhir) throw new LabgateError('CONFIG_INVALID', `${file} needs a sinks.fhir section for --fhir`);
  if (fhir) {
    fhir['enabled'] = runtime.fhir !== undefined;
    if (runtime.fhir) {
      fhir['baseUrl'] = runtime.fhir.url;
      fhir['auth'] = { ...(fhir['auth'] as object), tokenUrl: runtime.fhir.tokenUrl, privateKeyFile: runtime.fhir.keyFile };
    }
  }
  const result = validateConfig(raw);
  if (result.kind === 'invalid') throw new LabgateError('CONFIG_INVALID', `${file} is invalid:\n${formatProblems(result.problems)}`);
  return result.config;
}
