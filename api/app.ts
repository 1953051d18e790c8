// Builds the web role's Express app from injected dependencies; never listens (server.ts does).
import cookieParser from 'cookie-parser';
import express, { type Express } from 'express';
import { registerJobMetrics } from '../lib/jobs/metrics';
import { DOCUMENT_PATHS, openApiDocument } from '../lib/openapi/document';
import { ingestEnqueuer } from '../lib/queue/ingest';
import { registerQueueMetrics } from '../lib/queue/metrics';
import type { AppDeps } from './deps';
import { requireReader } from './middleware/auth';
import { plausibleErrorShape } from './middleware/envelope';
import { errorHandler, notFoundHandler } from './middleware/errors';
import { monthlyQuota, perMinuteLimit } from './middleware/rateLimits';
import { requestLog } from './middleware/requestLog';
import { pathGuard } from './middleware/validate';
import { annotationRoutes } from './routes/annotations';
import { authRoutes } from './routes/auth';
import { browserIngestRoutes } from './routes/browserIngest';
import { conversationRoutes } from './routes/conversations';
import { dashboardRoutes } from './routes/dashboard';
import { externalAnomalyRoutes } from './routes/external/anomalies';
import { exportRoutes } from './routes/external/export';
import { externalFunnelRoutes } from './routes/external/funnels';
import { externalInsightRoutes } from './routes/external/insights';
import { externalLtvRoutes } from './routes/external/ltv';
import { externalQueryRoutes, QUERY_CREDITS, queryKeyGate } from './routes/external/query';
import { externalReadRoutes } from './routes/external/read';
import { externalRetentionRoutes } from './routes/external/retention';
import { statsRoutes } from './routes/external/stats';
import { externalWebsiteWriteRoutes } from './routes/external/websites';
import { healthRoutes } from './routes/health';
import { ingestRoutes } from './routes/ingest';
import { inviteRoutes, teamInviteRoutes } from './routes/invites';
import { onboardingRoutes } from './routes/onboarding';
import { plausibleRoutes } from './routes/plausible';
import { publicRoutes } from './routes/public';
import { shareQueryRoutes, shareRoutes, sharingRoutes } from './routes/share';
import { teamRoutes } from './routes/teams';
import { trackerRoutes } from './routes/tracker';
import { unsubscribeRoutes } from './routes/unsubscribe';
import { userRoutes } from './routes/users';
import { websiteRoutes } from './routes/websites';

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.TRUST_PROXY);
  app.set('query parser', 'simple');
  app.use(requestLog(deps.logger, deps.metrics));
  // Before any route decodes a path parameter: bad percent-encoding and control characters are a 400 everywhere.
  app.use(pathGuard());
  registerQueueMetrics(deps.metrics, [deps.ingestQueue], deps.redis, deps.config.REDIS_PREFIX);
  // The worker runs the jobs; their series reach /metrics through PostgreSQL (lib/jobs/metrics.ts).
  registerJobMetrics(deps.metrics, deps.pool);
  app.use(healthRoutes(deps));

  // Ingestion parses its own (larger) body after authentication and limits (DESIGN §3 request order). Both
  // paths share one enqueuer, so one memory sample of the queue's Redis a second serves them, and the
  // services in deps.ingest.
  const enqueue = ingestEnqueuer(deps.ingestQueue, deps.config.QUEUE_MEMORY_LIMIT_PERCENT, deps.logger);
  app.use('/api/v1', ingestRoutes(deps, enqueue));
  app.use(trackerRoutes());
  app.use(browserIngestRoutes(deps, enqueue));
  // Widgets and real-time counters: no credential, CORS for any origin, a per-address limit.
  app.use(publicRoutes(deps));
  // Email unsubscribe links: no sign-in, the signed token is the credential.
  app.use(unsubscribeRoutes(deps));

  const json = express.json({ limit: '1mb', strict: true });
  // Plausible's query API answers errors in Plausible's shape, its unreadable bodies too.
  app.use('/api/v2', plausibleErrorShape());
  app.use('/api', cookieParser(), json);
  app.use('/api/auth', authRoutes(deps));
  app.use('/api/users', userRoutes(deps));
  app.use('/api/websites/:websiteId/sharing', sharingRoutes(deps, deps.ingest.sites));
  app.use('/api/websites', websiteRoutes(deps, deps.ingest.sites));
  // Shared dashboards' public side: no credential, the public per-address limit.
  app.use('/api/share', shareRoutes(deps));
  app.use('/api/teams/:teamId/invites', teamInviteRoutes(deps));
  app.use('/api/teams', teamRoutes(deps));
  app.use('/api/invites', inviteRoutes(deps));
  app.use('/api/conversations', conversationRoutes(deps));
  app.use('/api/onboarding', onboardingRoutes(deps));
  app.use('/api/annotations', annotationRoutes(deps));
  // The OpenAPI document is public and edge-cacheable (spec: 5 minutes).
  app.get(DOCUMENT_PATHS, (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(openApiDocument(deps.config.PUBLIC_URL));
  });
  // The natural-language query costs 3 credits: its own stack, ahead of the v1 one (which charges 1), so
  // a question is charged once; the plan gate runs before the charge.
  app.use(
    '/api/external/v1/query',
    requireReader(deps.config.JWT_SECRET, deps.pool),
    perMinuteLimit(deps.redis, deps.config.REDIS_PREFIX, 'external'),
    queryKeyGate(),
    monthlyQuota(deps.redis, deps.config.REDIS_PREFIX, QUERY_CREDITS),
    externalQueryRoutes(deps),
  );
  app.use(
    '/api/external/v1',
    requireReader(deps.config.JWT_SECRET, deps.pool),
    perMinuteLimit(deps.redis, deps.config.REDIS_PREFIX, 'external'),
    monthlyQuota(deps.redis, deps.config.REDIS_PREFIX, 1),
    externalWebsiteWriteRoutes(deps),
    externalReadRoutes(deps),
    externalFunnelRoutes(deps),
    externalLtvRoutes(deps),
    externalRetentionRoutes(deps),
    externalAnomalyRoutes(deps),
    externalInsightRoutes(deps),
    statsRoutes(deps, 'v1'),
  );
  app.use(
    '/api/external/v2',
    requireReader(deps.config.JWT_SECRET, deps.pool),
    perMinuteLimit(deps.redis, deps.config.REDIS_PREFIX, 'external'),
    monthlyQuota(deps.redis, deps.config.REDIS_PREFIX, 1),
    statsRoutes(deps, 'v2'),
    exportRoutes(deps),
  );
  // A shared link's token reads its website's aggregates here; every other credential goes on to the next stack.
  app.use('/api/v2', shareQueryRoutes(deps));
  // Plausible's Stats API v2 path, with the Stats API v2's credentials, limits and credits.
  app.use(
    '/api/v2',
    requireReader(deps.config.JWT_SECRET, deps.pool),
    perMinuteLimit(deps.redis, deps.config.REDIS_PREFIX, 'external'),
    monthlyQuota(deps.redis, deps.config.REDIS_PREFIX, 1),
    plausibleRoutes(deps),
  );

  app.use(dashboardRoutes(deps.config.PUBLIC_URL));
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
