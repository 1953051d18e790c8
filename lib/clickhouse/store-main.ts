// Entry point of the `store` role (DESIGN §1): owns chDB on DATA_DIR/clickhouse and serves it on loopback.
import fs from 'node:fs';
import path from 'node:path';
import { configOrExit } from '../config';
import { createLogger } from '../log';
import { startStoreServer } from './store-server';

const SHUTDOWN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  const cfg = configOrExit();
  const logger = createLogger(cfg.LOG_LEVEL, 'store');
  const dataDir = path.join(cfg.DATA_DIR, 'clickhouse');
  fs.mkdirSync(dataDir, { recursive: true });

  let store: Awaited<ReturnType<typeof startStoreServer>>;
  try {
    store = await startStoreServer({ dataDir, port: cfg.STORE_PORT, host: '127.0.0.1', logger });
  } catch (err) {
    logger.fatal({ err }, 'store failed to start');
    process.exit(1);
  }
  // Tests and the supervisor parse this line for the port.
  logger.info({ port: store.port, dataDir }, 'store listening');

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'store stopping');
    const deadline = setTimeout(() => {
      logger.error('store did not close within 10 s; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    store.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'store close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

void main();
