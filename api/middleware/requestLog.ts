// Request id, access log line and HTTP metrics. Logs carry the route pattern, never query strings (which
// could hold keys) or client addresses.
import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from '../../lib/log';
import type { Metrics } from '../../lib/metrics';

/** The label of every request no route answered (404s, and refusals by middleware before a route). */
export const UNMATCHED_ROUTE = 'unmatched';

// What the router (router 2.x, Express 5) keeps per layer; its published types lag behind.
interface LayerShape {
  route?: { path?: unknown };
  rawPath?: unknown;
  handle?: { stack?: unknown };
}

const labels = new WeakMap<object, string>();

const patternText = (p: unknown): string => (Array.isArray(p) ? p.map(patternText).join('|') : String(p ?? ''));

/**
 * The full pattern of the route that answered, e.g. `/api/websites/:websiteId/goals/:goalId`. req.baseUrl
 * holds the matched values (real ids: unbounded label values), so the pattern is rebuilt from the mount
 * layers' own patterns by finding the matched Route object in the app's router tree; found once per route.
 * A router instance mounted at two places is labelled by its first mount.
 */
export function routeLabel(req: Request): string {
  const route: unknown = req.route;
  if (!route || typeof route !== 'object') return UNMATCHED_ROUTE;
  let label = labels.get(route);
  if (label === undefined) {
    label = findRoute(req.app.router.stack as unknown as LayerShape[], route, '') ?? UNMATCHED_ROUTE;
    labels.set(route, label);
  }
  return label;
}

function findRoute(stack: LayerShape[], target: object, prefix: string): string | undefined {
  for (const layer of stack) {
    if (layer.route === target) {
      const path = patternText(layer.route.path);
      return path === '/' && prefix ? prefix : prefix + path;
    }
    const child = layer.handle?.stack;
    if (!layer.route && Array.isArray(child)) {
      const mount = patternText(layer.rawPath);
      const found = findRoute(child as LayerShape[], target, mount === '/' ? prefix : prefix + mount);
      if (found) return found;
    }
  }
  return undefined;
}

export function requestLog(logger: Logger, metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeLabel(req);
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.httpDuration.observe({ method: req.method, route }, seconds);
      logger.debug(
        { requestId, method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1000) },
        'request',
      );
    });
    next();
  };
}
