// TRUST_PROXY (issue 19 item 11): a hop count or a list of proxy addresses/CIDRs as Express's `trust proxy`
// takes it, never "trust everything"; the client is the right-most untrusted X-Forwarded-For hop.

import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { ConfigError, loadConfig, parseTrustProxy } from '../../../lib/config';

describe('parseTrustProxy', () => {
  it.each([
    ['false', false],
    ['0', false],
    ['no', false],
    ['1', 1],
    [' 2 ', 2],
    ['loopback', ['loopback']],
    ['loopback, linklocal,uniquelocal', ['loopback', 'linklocal', 'uniquelocal']],
    ['10.0.0.0/8,172.16.0.1', ['10.0.0.0/8', '172.16.0.1']],
    ['fd00::/8, ::1', ['fd00::/8', '::1']],
    ['LOOPBACK', ['loopback']],
  ])('%j → %j', (input, expected) => {
    expect(parseTrustProxy(input)).toEqual(expected);
  });

  it.each(['true', 'TRUE', 'yes'])('refuses %j with a reason that says what to give instead', (input) => {
    expect(() => parseTrustProxy(input)).toThrow(/hop count or a CIDR list/);
  });

  it.each(['maybe', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.1,', 'fe80::1%eth0', '-1', '1.5', '999'])(
    'refuses %j',
    (input) => {
      expect(() => parseTrustProxy(input)).toThrow();
    },
  );

  it('TRUST_PROXY=true stops start-up with one line naming the variable', () => {
    let error: unknown;
    try {
      loadConfig({ DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-tp-')), TRUST_PROXY: 'true' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('TRUST_PROXY');
    expect((error as Error).message.split('\n')).toHaveLength(1);
    expect((error as Error).message).toMatch(/^invalid configuration: TRUST_PROXY .*hop count or a CIDR list/);
  });
});

describe('the parsed value as Express applies it', () => {
  async function clientIp(setting: string, xff?: string): Promise<string> {
    const app = express();
    app.set('trust proxy', parseTrustProxy(setting));
    app.get('/', (req, res) => {
      res.send(req.ip);
    });
    const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: xff ? { 'x-forwarded-for': xff } : {} });
      return await res.text();
    } finally {
      server.close();
    }
  }

  it('false: X-Forwarded-For is ignored', async () => {
    expect(await clientIp('false', '198.51.100.1')).toBe('127.0.0.1');
  });

  it('a hop count: the client is that many hops from the right; spoofed entries on the left change nothing', async () => {
    expect(await clientIp('1', '198.51.100.1')).toBe('198.51.100.1');
    expect(await clientIp('1', '6.6.6.6, 198.51.100.1')).toBe('198.51.100.1');
    expect(await clientIp('2', '6.6.6.6, 198.51.100.1, 10.0.0.5')).toBe('198.51.100.1');
  });

  it('a CIDR list: hops inside it are skipped, the right-most address outside it is the client', async () => {
    const setting = '127.0.0.0/8, 10.0.0.0/8';
    expect(await clientIp(setting, '6.6.6.6, 198.51.100.1, 10.1.2.3, 10.4.5.6')).toBe('198.51.100.1');
    expect(await clientIp(setting, '198.51.100.1')).toBe('198.51.100.1');
    // A connection from outside the list is the client itself, whatever it claims.
    expect(await clientIp('10.0.0.0/8', '198.51.100.1')).toBe('127.0.0.1');
  });
});
