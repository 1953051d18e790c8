// Entry point of the `store` role (DESIGN §1): owns chDB on DATA_DIR/clickhouse and serves it on loopback.
import fs from 'node:fs';
import path from 'node:path';
import { type Config, configOrExit } from '../config';
import { createLogger } from '../log';
import { runRole } from '../process/shutdown';
import { dataDirExposure, storeCredentialFor } from './credential';
import { startStoreServer } from './store-server';

export async function startStore(cfg: Config): Promise<{ stop(): Promise<void> }> {
  const logger = createLogger(cfg.LOG_LEVEL, 'store');
  const dataDir = path.join(cfg.DATA_DIR, 'clickhouse');
  const exposure = dataDirExposure(cfg.DATA_DIR);
  if (exposure) logger.warn({ dataDir: cfg.DATA_DIR }, exposure);
  // Directories made here are private (DATA_DIR too, when it does not exist yet); existing ones keep their mode.
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // CLICKHOUSE_PASSWORD when set, else the credential under DATA_DIR: never an open store.
  const credential = {
    user: cfg.CLICKHOUSE_USER,
    password: cfg.CLICKHOUSE_PASSWORD || storeCredentialFor(cfg.DATA_DIR),
  };
  let store: Awaited<ReturnType<typeof startStoreServer>>;
  try {
    store = await startStoreServer({ dataDir, port: cfg.STORE_PORT, host: '127.0.0.1', logger, credential });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // One line naming the variable to change (runRole prints it), not a stack.
    if (code === 'EADDRINUSE') throw new Error(`STORE_PORT ${cfg.STORE_PORT} is already in use`);
    if (code === 'EACCES') throw new Error(`STORE_PORT ${cfg.STORE_PORT} may not be bound by this user`);
    throw err;
  }
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
  const config = configOrExit('store');
  runRole('store', () => startStore(config), { logLevel: config.LOG_LEVEL });
}
