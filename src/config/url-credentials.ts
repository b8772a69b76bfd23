// No credential inside an HTTP sink's URL (the LIMS, the FHIR server, their token endpoints): a URL is logged,
// shown in errors and copied into tickets, while secrets belong in the files named by the `*File` keys. Refused are
// a user or password before the host (`https://user:pw@lims.lab`) and query parameters that carry one
// (`?access_token=...`, `?api_key=...`). The PostgreSQL URL names its user by design; its password is checked apart.
import type { ConfigProblem } from './problem.js';

type Raw = Record<string, unknown>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const SECRET_PARAM = /token|secret|passw|pwd|api[-_]?key|apikey|auth|signature|sig$|credential/i;

/** Problems for every `...Url` of the HTTP sinks that carries a credential. */
export function urlCredentialChecks(input: unknown): ConfigProblem[] {
  const sinks = isRecord(input) ? input['sinks'] : undefined;
  if (!isRecord(sinks)) return [];
  return Object.entries(sinks)
    .filter(([name, sink]) => name !== 'postgres' && isRecord(sink))
    .flatMap(([name, sink]) => urls(sink as Raw, `sinks.${name}`))
    .flatMap(([path, url]) => credentialIn(path, url));
}

function urls(object: Raw, path: string): [string, string][] {
  return Object.entries(object).flatMap(([key, value]): [string, string][] => {
    if (isRecord(value)) return urls(value, `${path}.${key}`);
    return /url$/i.test(key) && typeof value === 'string' ? [[`${path}.${key}`, value]] : [];
  });
}

function credentialIn(path: string, text: string): ConfigProblem[] {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return []; // the schema reports a URL it cannot read
  }
  if (url.username || url.password) {
    return [{ path, message: 'must not contain a user or password; put the secret in the file its auth section names (tokenFile, clientSecretFile)' }];
  }
  const named = [...url.searchParams.keys()].filter((k) => SECRET_PARAM.test(k));
  if (named.length) return [{ path, message: `must not carry a credential in its query (${named.join(', ')}); use the auth section's secret file` }];
  return [];
}
