// What the web role's app is built from; server.ts makes real ones, tests make isolated ones.
import type { Pool } from 'pg';
import type { ClickHouseClient } from '../lib/clickhouse/client';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/log';
import type { Metrics } from '../lib/metrics';
import type { Redis } from '../lib/redis';

export interface AppDeps {
  config: Config;
  pool: Pool;
  redis: Redis;
  clickhouse: ClickHouseClient;
  logger: Logger;
  metrics: Metrics;
}
