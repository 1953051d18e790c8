// Secrets an install generates once and keeps under DATA_DIR (the development JWT secret, the embedded store's
// credential): every process of the install reads the same file, and the first to start creates it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** DATA_DIR/<name>, created (mode 0600, `bytes` random bytes) on first use; concurrent first uses agree on one value. */
export function keptSecret(dataDir: string, name: string, bytes: number, what = 'secret'): string {
  const file = path.join(dataDir, name);
  const existing = readSecret(file, what);
  if (existing !== undefined) return existing;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 }); // only a directory made here; an existing one keeps its mode
  const secret = randomBytes(bytes).toString('base64url');
  // Written whole to a private name, then linked into place: link() fails when the file exists, so a reader
  // never sees a half-written secret and the first writer wins.
  const draft = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  fs.writeFileSync(draft, secret, { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(draft, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
      throw new Error(`cannot create ${file}: ${(err as Error).message}`);
    const theirs = readSecret(file, what);
    if (theirs === undefined) throw new Error(`${file} disappeared while being read`);
    return theirs;
  } finally {
    fs.rmSync(draft, { force: true });
  }
}

function readSecret(file: string, what: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  const secret = text.trim();
  if (secret.length < 16) throw new Error(`${file} holds no usable ${what} (delete it to generate a new one)`);
  return secret;
}
