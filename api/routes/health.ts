// Liveness, readiness and Prometheus metrics.
import { timingSafeEqual } from 'node:crypto';
import { type Request, Router } from 'express';
import type { AppDeps } from '../deps';
import { errorBody } from '../middleware/envelope';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function healthRoutes({ pool, redis, clickhouse, metrics, config }: AppDeps): Router {
  const router = Router();

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res) => {
    const check = async (fn: () => Promise<unknown>) => {
      try {
        await withTimeout(fn(), 2_000);
        return 'ok';
      } catch {
        return 'unreachable';
      }
    };
    const [postgres, redisState, clickhouseState] = await Promise.all([
      check(() => pool.query('SELECT 1')),
      check(() => redis.ping()),
      check(async () => {
        const r = await clickhouse.ping();
        if (!r.success) throw new Error('ping failed');
      }),
    ]);
    const checks = { postgres, redis: redisState, clickhouse: clickhouseState };
    const ready = Object.values(checks).every((v) => v === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks });
  });

  // Without METRICS_TOKEN only loopback may read metrics: the connection must be local (a forged
  // X-Forwarded-For cannot pass as local) and so must the client behind it, so a reverse proxy on this
  // machine (TRUST_PROXY) does not make everyone it forwards local.
  router.get('/metrics', async (req: Request, res) => {
    const allowed = config.METRICS_TOKEN
      ? sameSecret(req.headers.authorization ?? '', `Bearer ${config.METRICS_TOKEN}`)
      : LOOPBACK.has(req.socket.remoteAddress ?? '') && LOOPBACK.has(req.ip ?? '');
    if (!allowed) {
      res
        .status(config.METRICS_TOKEN ? 401 : 403)
        .json(errorBody(config.METRICS_TOKEN ? 'UNAUTHORIZED' : 'FORBIDDEN', 'Metrics are not public'));
      return;
    }
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });
  return router;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
