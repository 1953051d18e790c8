// The embedded store's credential: generated once under DATA_DIR, read by every role of the install (the store
// checks it, the others send it), so nothing that merely reaches the loopback port can run SQL.
import fs from 'node:fs';
import { keptSecret } from '../keptSecret';

export const STORE_CREDENTIAL_FILE = 'store-credential';

/** DATA_DIR/store-credential, created (mode 0600) on first use; concurrent first uses agree on one value. */
export const storeCredentialFor = (dataDir: string): string =>
  keptSecret(dataDir, STORE_CREDENTIAL_FILE, 32, 'credential');

/**
 * A warning when DATA_DIR (the store's data, its credential, the development JWT secret) is open to its group or
 * others; undefined when it is private or absent. Tidemark creates it 0700 but never changes an operator's mode.
 */
export function dataDirExposure(dataDir: string): string | undefined {
  let mode: number;
  try {
    mode = fs.statSync(dataDir).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  return `DATA_DIR ${dataDir} has mode ${mode.toString(8).padStart(4, '0')}: its group or other users can reach it; chmod 700 it`;
}
