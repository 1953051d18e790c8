// The embedded store's credential: generated once under DATA_DIR, read by every role of the install (the store
// checks it, the others send it), so nothing that merely reaches the loopback port can run SQL.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const STORE_CREDENTIAL_FILE = 'store-credential';

/** DATA_DIR/store-credential, created (mode 0600) on first use; concurrent first uses agree on one value. */
export function storeCredentialFor(dataDir: string): string {
  const file = path.join(dataDir, STORE_CREDENTIAL_FILE);
  const existing = readCredential(file);
  if (existing !== undefined) return existing;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 }); // only a directory made here; an existing one keeps its mode
  const credential = randomBytes(32).toString('base64url');
  // Written whole to a private name, then linked into place: link() fails when the file exists, so a reader
  // never sees a half-written credential and the first writer wins.
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  fs.writeFileSync(draft, credential, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(draft, file);
    return credential;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`cannot create ${file}: ${(err as Error).message}`);
    const theirs = readCredential(file);
    if (theirs === undefined) throw new Error(`${file} disappeared while being read`);
    return theirs;
  } finally {
    fs.rmSync(draft, { force: true });
  }
}

function readCredential(file: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  const credential = text.trim();
  if (credential.length < 16) throw new Error(`${file} holds no usable credential (delete it to generate a new one)`);
  return credential;
}

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
