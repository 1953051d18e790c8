import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { storeCredentialFor } from '../../lib/clickhouse/credential';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-credential-'));

describe('the store credential', () => {
  it('is created once under DATA_DIR, mode 0600, and read back after', () => {
    const dir = path.join(tmp(), 'not-yet');
    const first = storeCredentialFor(dir);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fs.statSync(path.join(dir, 'store-credential')).mode & 0o777).toBe(0o600);
    expect(storeCredentialFor(dir)).toBe(first);
    expect(fs.readdirSync(dir)).toEqual(['store-credential']);
  });

  it('processes starting together agree on one credential', async () => {
    const dir = tmp();
    const module = path.join(__dirname, '..', '..', 'dist', 'lib', 'clickhouse', 'credential.js');
    const script = `process.stdout.write(require(${JSON.stringify(module)}).storeCredentialFor(${JSON.stringify(dir)}))`;
    const outputs = await Promise.all(
      Array.from({ length: 8 }, () => {
        const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        return new Promise<string>((resolve) => child.on('exit', () => resolve(out)));
      }),
    );
    expect(new Set(outputs).size).toBe(1);
    expect(outputs[0]).toBe(fs.readFileSync(path.join(dir, 'store-credential'), 'utf8'));
    expect(fs.readdirSync(dir)).toEqual(['store-credential']);
  });

  it('an empty credential file is an error naming it, not an empty password', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'store-credential'), '\n', { mode: 0o600 });
    expect(() => storeCredentialFor(dir)).toThrow(/store-credential holds no usable credential/);
  });
});
