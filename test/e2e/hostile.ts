// What the hostile-network suites share: a `labgate run` child with one HL7 instrument on a tcp-server port and a
// sender connected to it, raw HTTP requests over a socket (no client-side retry), and fresh HL7 messages.
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { mindrayBs } from '../hl7/fixtures.js';
import { Hl7TcpSender } from './analyzers.js';
import { freePort, GatewayChild, scratch, writeConfig } from './harness.js';

/** Sends `request` on a fresh socket and resolves with everything the server wrote before closing or going quiet. */
export function rawRequest(port: number, request: string, quietMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      clearTimeout(timer);
      timer = setTimeout(done, 100);
    });
    socket.once('error', (err) => (text ? done() : reject(err)));
    socket.once('close', done);
    socket.once('connect', () => {
      socket.write(request);
      timer = setTimeout(done, quietMs);
    });
  });
}

/** What a rig may change: the child's environment, gateway.http, gateway itself, the instrument's transport. */
export interface RigOptions {
  env?: Record<string, string>;
  http?: object;
  gateway?: object;
  transport?: object;
}

/** A gateway child with one HL7 instrument (bs240) listening on TCP, and a sender connected to it. */
export async function hl7Rig(cleanups: (() => Promise<void> | void)[], name: string, options: RigOptions = {}) {
  const s = scratch(name);
  cleanups.push(s.cleanup);
  const httpPort = await freePort();
  const hl7Port = await freePort();
  const instruments = [
    {
      id: 'bs240',
      driver: 'hl7',
      timezone: 'Europe/Vienna',
      transport: { kind: 'tcp-server', host: '127.0.0.1', port: hl7Port, ...options.transport },
      mapping: mindrayBs.profile.mapping,
      options: mindrayBs.options,
    },
  ];
  const file = writeConfig({ dir: s.dir, httpPort, instruments });
  const config = JSON.parse(readFileSync(file, 'utf8')) as { gateway: { http: object } };
  Object.assign(config.gateway, options.gateway);
  Object.assign(config.gateway.http, options.http);
  writeFileSync(file, JSON.stringify(config));
  const gateway = new GatewayChild(file, httpPort, s.dir);
  cleanups.push(() => gateway.stopIfRunning());
  await gateway.start(options.env);
  const sender = new Hl7TcpSender(hl7Port);
  await sender.connect();
  cleanups.push(() => sender.close());
  return { gateway, sender, httpPort, hl7Port, dir: s.dir };
}

/** The Mindray fixture as a new message: its own control id and accession. */
export const hl7Message = (n: number): string => mindrayBs.payload.replace('|12|P|', `|C${n}|P|`).replaceAll('2410290017', `ACC${n}`);
