// Stops a gateway abruptly in the middle of a delivery, in-process: at one instant the store's database is closed
// with nothing more recorded (SQLite keeps exactly what was committed, as after a power cut or SIGKILL), and every
// sink answer still on its way is lost. Only then are the dead gateway's ports, listener and pools torn down, so the
// next Gateway can open the same data directory.
import type { DemoGateway } from './demo-environment.js';
import type { LostAnswers } from './observed-sink.js';

/** What the crash left behind, per sink. */
export type CrashReport = Map<string, LostAnswers>;

/** Kills `demo.gateway` without letting it record what is in flight. */
export async function crashGateway(demo: DemoGateway): Promise<CrashReport> {
  const { gateway, sinks } = demo;
  for (const sink of sinks) sink.freeze();
  // The instant of the crash: from here on the store learns nothing (SQLite writes are synchronous, so no
  // transaction is half done between two events of the loop).
  gateway.store?.close();
  // The drains stop claiming; their in-flight batches then end against the closed store and record nothing.
  const stopping = gateway.drains.map((drain) => drain.stop());
  for (const sink of sinks) sink.release();
  await Promise.allSettled(stopping);
  await gateway.stop();
  return new Map(sinks.map((sink) => [sink.name, sink.lostAnswers()]));
}
