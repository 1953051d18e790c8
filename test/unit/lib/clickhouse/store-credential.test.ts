import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { dataDirExposure, storeCredentialFor } from '../../../../lib/clickhouse/credential';
import { startStore } from '../../../../lib/clickhouse/store-main';
import { loadConfig } from '../../../../lib/config';
import { PROJECT_ROOT } from '../../../../lib/paths';

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
    const module = path.join(PROJECT_ROOT, 'dist', 'lib', 'clickhouse', 'credential.js');
    const script = `process.stdout.write(require(${JSON.stringify(module)}).storeCredentialFor(${JSON.stringify(dir)}))`;
    const outputs = await Promise.all(
      Array.from({ length: 8 }, () => {
        const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        // 'close', not 'exit': exit can come before the last of stdout has been read.
        return new Promise<string>((resolve) => child.on('close', () => resolve(out)));
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

describe('DATA_DIR permissions', () => {
  it('a DATA_DIR made for the credential is private (0700); an existing one keeps its mode', () => {
    const parent = path.join(tmp(), 'made');
    const dir = path.join(parent, 'data');
    storeCredentialFor(dir);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(parent).mode & 0o777).toBe(0o700);
    const operators = tmp();
    fs.chmodSync(operators, 0o755);
    storeCredentialFor(operators);
    expect(fs.statSync(operators).mode & 0o777).toBe(0o755);
  });

  it('the store role makes DATA_DIR and DATA_DIR/clickhouse private, before it binds its port', async () => {
    const busy = net.createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as net.AddressInfo).port;
    const dataDir = path.join(tmp(), 'data');
    try {
      const cfg = loadConfig({
        DATA_DIR: dataDir,
        STORE_PORT: String(port),
        CLICKHOUSE_PASSWORD: 'p'.repeat(32),
        JWT_SECRET: 's'.repeat(32),
        LOG_LEVEL: 'silent',
      });
      await expect(startStore(cfg)).rejects.toThrow(`STORE_PORT ${port} is already in use`);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dataDir, 'clickhouse')).mode & 0o777).toBe(0o700);
  });

  it('names a DATA_DIR its group or others can reach, and is quiet about a private or missing one', () => {
    const dir = tmp();
    fs.chmodSync(dir, 0o755);
    expect(dataDirExposure(dir)).toBe(
      `DATA_DIR ${dir} has mode 0755: its group or other users can reach it; chmod 700 it`,
    );
    fs.chmodSync(dir, 0o750);
    expect(dataDirExposure(dir)).toMatch(/mode 0750/);
    fs.chmodSync(dir, 0o700);
    expect(dataDirExposure(dir)).toBeUndefined();
    expect(dataDirExposure(path.join(dir, 'missing'))).toBeUndefined();
  });
});
