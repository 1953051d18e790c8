// Starts one embedded store process per jest worker (chDB allows one data directory per process); test
// files reach theirs through TIDEMARK_TEST_STORE_URLS (with TIDEMARK_TEST_STORE_PASSWORDS) and isolate themselves
// by database name.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStoreProcess } from './store-process';

type Store = Awaited<ReturnType<typeof startStoreProcess>>;

export default async function globalSetup(config: { maxWorkers: number }): Promise<void> {
  const count = Math.max(1, config.maxWorkers);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-test-stores-'));
  const stores: Store[] = await Promise.all(
    Array.from({ length: count }, (_, i) => startStoreProcess({ dataDir: path.join(root, `worker-${i + 1}`) })),
  );
  process.env.TIDEMARK_TEST_STORE_URLS = stores.map((s) => s.url).join(',');
  // Each store's credential (DATA_DIR/store-credential), in the same order; testConfig sends it.
  process.env.TIDEMARK_TEST_STORE_PASSWORDS = stores.map((s) => s.password).join(',');
  (globalThis as { __tidemarkStores?: { stores: Store[]; root: string } }).__tidemarkStores = { stores, root };
}
