// Preloaded into `labgate run` by a bench (node --import): the gateway's own event-loop delay at 1 ms resolution
// (prom-client's /metrics histogram counts its 100 ms sampling interval in), read by the parent over the IPC channel:
// 'reset' starts a window, 'read' answers the window's percentiles in ms. The gateway's code is not touched.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
if (process.send) {
  process.on('message', (m) => {
    if (m === 'reset') delay.reset();
    const ms = (ns: number): number => ns / 1e6;
    process.send!({ p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) });
  });
  // The channel must not keep a gateway that was told to stop alive.
  process.channel?.unref();
}
