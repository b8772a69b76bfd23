// GET /metrics: the Prometheus text exposition of the gateway's own registry.
import type { Metrics } from '../metrics.js';
import { send, type Route } from './server.js';

/** The /metrics route for a Metrics registry. */
export function metricsRoute(metrics: Metrics): Route {
  return {
    method: 'GET',
    path: '/metrics',
    handler: async (_req, res) => {
      const { contentType, body } = await metrics.render();
      send(res, 200, contentType, body);
    },
  };
}
