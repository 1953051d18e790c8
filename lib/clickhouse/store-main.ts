// Entry point of the `store` role (DESIGN §1): owns chDB on DATA_DIR/clickhouse and serves it on loopback.
import fs from 'node:fs';
import path from 'node:path';
import { configOrExit, type Config } from '../config';
import { createLogger } from '../log';
import { runRole } from '../process/shutdown';
import { startStoreServer } from './store-server';

export async function startStore(cfg: Config): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger(cfg.LOG_LEVEL, 'store');
  const dataDir = path.join(cfg.DATA_DIR, 'clickhouse');
  fs.mkdirSync(dataDir, { recursive: true });
  const store = await startStoreServer({ dataDir, port: cfg.STORE_PORT, host: '127.0.0.1', logger });
  // Tests and the supervisor parse this line for the port.
  logger.info({ port: store.port, dataDir }, 'store listening');
  return {
    async stop() {
      logger.info('store stopping');
      await store.close();
    },
  };
}

if (require.main === module) {
  const config = configOrExit();
  runRole('store', () => startStore(config));
}
