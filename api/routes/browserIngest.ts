// Browser ingestion: POST /api/events/:code (aliases /api/track/:code, /e/:code), JSON or text/plain
// (sendBeacon) bodies, CORS for any origin, and the tracker's small cacheable config endpoint.
import express, { type Request, type Response, Router } from 'express';
import { Counter } from 'prom-client';
import { badRequest, notFound } from '../../lib/errors';
import { admitBrowserClient, type BrowserDeps, ingestBrowserEvent } from '../../lib/ingest/accept/browser';
import {
  type BrowserEvent,
  type BrowserIngestResult,
  browserEventSchema,
  MAX_BROWSER_BODY_BYTES,
  type TrackerConfig,
} from '../../lib/ingest/accept/browserSchemas';
import { normalizeIp } from '../../lib/ingest/accept/enrich';
import { cleanJson } from '../../lib/ingest/job/sanitize';
import type { IngestEnqueue } from '../../lib/queue/ingest';
import type { AppDeps } from '../deps';
import { openCors } from '../middleware/cors';
import { sendData } from '../middleware/envelope';
import { parse } from '../middleware/validate';

export const BROWSER_PATHS = ['/api/events/:code', '/api/track/:code', '/e/:code'];

export function browserIngestRoutes(deps: AppDeps, enqueue: IngestEnqueue): Router {
  const { sites } = deps.ingest;
  const outcomes =
    (deps.metrics.registry.getSingleMetric('tidemark_browser_events_total') as Counter<'outcome'> | undefined) ??
    new Counter({
      name: 'tidemark_browser_events_total',
      help: 'Browser events by outcome (recorded, or the reason they were ignored)',
      labelNames: ['outcome'],
      registers: [deps.metrics.registry],
    });
  const browser: BrowserDeps = {
    sites,
    salts: deps.ingest.salts,
    redis: deps.redis,
    redisPrefix: deps.config.REDIS_PREFIX,
    enrichers: deps.ingest.enrichers,
    enqueue,
    presence: deps.ingest.presence,
  };
  const router = Router();
  const cors = openCors();
  // Beacons arrive as text/plain; both are parsed as JSON here.
  const body = express.text({ type: () => true, limit: MAX_BROWSER_BODY_BYTES });

  const record = async (req: Request, res: Response) => {
    const now = Date.now();
    const ip = normalizeIp(req.ip);
    // Website and abuse limit first: a client past its limit costs no parsing or matching.
    const admitted = await admitBrowserClient(browser, String(req.params.code), ip, now);
    let raw: unknown;
    try {
      raw = JSON.parse(typeof req.body === 'string' ? req.body : '');
    } catch {
      throw badRequest('Request body is not valid JSON');
    }
    // Cleaned once here: ClickHouse and PostgreSQL both refuse some of what a page can send (NUL, lone surrogates).
    const event = cleanJson(parse(browserEventSchema, raw)) as BrowserEvent;
    const outcome = await ingestBrowserEvent(
      browser,
      {
        trackingCode: String(req.params.code),
        event,
        ip,
        userAgentHeader: req.headers['user-agent'],
        gpc: req.headers['sec-gpc'] === '1',
        now,
      },
      admitted,
    );
    outcomes.inc({ outcome: outcome.kind === 'recorded' ? 'recorded' : outcome.reason });
    const eventName = event.event_type === 'custom' ? (event.event_name ?? null) : null;
    sendData(
      res,
      (outcome.kind === 'recorded'
        ? { type: 'event_recorded', event_type: event.event_type, event_name: eventName }
        : {
            type: 'event_ignored',
            reason: outcome.reason,
            event_type: event.event_type,
            event_name: eventName,
          }) satisfies BrowserIngestResult,
    );
  };

  for (const path of BROWSER_PATHS) {
    router.options(path, cors);
    router.post(path, cors, body, record);
  }

  // The tracker reads the website's tracking settings here; cacheable, so it costs one request per visitor.
  router.options('/api/events/:code/config', cors);
  router.get('/api/events/:code/config', cors, async (req, res) => {
    const site = await sites.get(String(req.params.code));
    if (!site?.website.is_active) throw notFound('Unknown tracking code');
    res.setHeader('Cache-Control', 'public, max-age=60');
    sendData(res, {
      tracking_code: site.website.tracking_code,
      settings: site.website.settings,
    } satisfies TrackerConfig);
  });
  return router;
}
