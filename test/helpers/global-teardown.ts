import fs from 'node:fs';
import type { startStoreProcess } from './store-process';

type Store = Awaited<ReturnType<typeof startStoreProcess>>;

export default async function globalTeardown(): Promise<void> {
  const state = (globalThis as { __tidemarkStores?: { stores: Store[]; root: string } }).__tidemarkStores;
  if (!state) return;
  await Promise.all(state.stores.map((s) => s.stop()));
  fs.rmSync(state.root, { recursive: true, force: true });
}
