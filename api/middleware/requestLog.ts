// Request id, access log line and HTTP metrics. Logs carry the route pattern, never query strings (which
// could hold keys) or client addresses.
import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../../lib/log';
import type { Metrics } from '../../lib/metrics';

export function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.httpDuration.observe({ method: req.method, route }, seconds);
      logger.debug({ requestId, method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1000) }, 'request');
    });
    next();
  };
}
