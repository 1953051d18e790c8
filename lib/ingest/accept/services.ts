// What both ingestion paths of a web process share, built once per process (api/server.ts; a test context
// builds its own) and handed to both through the app's deps: the daily salts and their cache, the site
// configs by tracking code (which the website routes invalidate), the realtime presence sink, and the geo
// and UA lookups, opened once because the geo databases are large.
import type { Pool } from 'pg';
import type { Logger } from '../../log';
import { type PresenceSink, presenceSink } from '../../realtime/presence';
import type { Redis } from '../../redis';
import type { Enrichers } from './enrichers';
import { DailySalts } from './salt';
import { SiteConfigCache } from './siteCache';

export interface AcceptServices {
  salts: DailySalts;
  sites: SiteConfigCache;
  enrichers: Enrichers;
  presence: PresenceSink;
}

export function acceptServices(deps: {
  pool: Pool;
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
  enrichers: Enrichers;
}): AcceptServices {
  return {
    salts: new DailySalts(deps.redis, deps.redisPrefix),
    sites: new SiteConfigCache(deps.pool, deps.logger),
    enrichers: deps.enrichers,
    presence: presenceSink(deps.redis, deps.redisPrefix, deps.logger),
  };
}
