import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../lib/config';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-config-'));

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const dir = tmp();
    const c = loadConfig({ DATA_DIR: dir });
    expect(c).toMatchObject({
      NODE_ENV: 'development',
      PORT: 3000,
      PUBLIC_URL: 'http://localhost:3000',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/tidemark',
      REDIS_URL: 'redis://127.0.0.1:6379',
      DEDUPE_REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_PREFIX: 'tidemark',
      CLICKHOUSE_URL: 'http://127.0.0.1:8123',
      EMBEDDED_STORE: true,
      CLICKHOUSE_DATABASE: 'tidemark',
      STORE_PORT: 8123,
      BACKGROUND_PRIORITY: 'idle',
      QUEUE_MEMORY_LIMIT_PERCENT: 90,
      TRUST_PROXY: false,
      ALLOW_SIGNUP: true,
      OPENAI_MODEL: 'gpt-4o-mini',
      LOG_LEVEL: 'info',
    });
    expect(c.CLICKHOUSE_CLUSTER).toBeUndefined();
    expect(c.METRICS_TOKEN).toBeUndefined();
  });

  it('honours every variable', () => {
    const c = loadConfig({
      NODE_ENV: 'production',
      PORT: '8080',
      PUBLIC_URL: 'https://stats.example.com',
      DATABASE_URL: 'postgres://u@db:5432/x',
      REDIS_URL: 'redis://r:6379',
      DEDUPE_REDIS_URL: 'redis://d:6379',
      REDIS_PREFIX: 'tm2',
      CLICKHOUSE_URL: 'http://ch:8123',
      CLICKHOUSE_DATABASE: 'analytics',
      CLICKHOUSE_CLUSTER: 'main',
      STORE_PORT: '9000',
      BACKGROUND_PRIORITY: 'normal',
      QUEUE_MEMORY_LIMIT_PERCENT: '75',
      DATA_DIR: '/var/lib/tidemark',
      JWT_SECRET: 's'.repeat(40),
      TRUST_PROXY: 'true',
      ALLOW_SIGNUP: 'false',
      METRICS_TOKEN: 'm'.repeat(20),
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1',
      OPENAI_MODEL: 'gpt-x',
      GEOIP_CITY_DB_V4: '/geo/v4.mmdb',
      GEOIP_CITY_DB_V6: '/geo/v6.mmdb',
      LOG_LEVEL: 'debug',
    });
    expect(c).toMatchObject({
      NODE_ENV: 'production',
      PORT: 8080,
      PUBLIC_URL: 'https://stats.example.com',
      DEDUPE_REDIS_URL: 'redis://d:6379',
      REDIS_PREFIX: 'tm2',
      CLICKHOUSE_URL: 'http://ch:8123',
      EMBEDDED_STORE: false,
      CLICKHOUSE_DATABASE: 'analytics',
      CLICKHOUSE_CLUSTER: 'main',
      STORE_PORT: 9000,
      BACKGROUND_PRIORITY: 'normal',
      QUEUE_MEMORY_LIMIT_PERCENT: 75,
      DATA_DIR: '/var/lib/tidemark',
      JWT_SECRET: 's'.repeat(40),
      TRUST_PROXY: true,
      ALLOW_SIGNUP: false,
      OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1',
      OPENAI_MODEL: 'gpt-x',
      GEOIP_CITY_DB_V4: '/geo/v4.mmdb',
      LOG_LEVEL: 'debug',
    });
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'not a url'],
    ['REDIS_PREFIX', 'has space'],
    ['CLICKHOUSE_DATABASE', 'drop;table'],
    ['TRUST_PROXY', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['BACKGROUND_PRIORITY', 'realtime'],
    ['QUEUE_MEMORY_LIMIT_PERCENT', '0'],
    ['QUEUE_MEMORY_LIMIT_PERCENT', '101'],
    ['JWT_SECRET', 'short'],
  ])('names %s when it is bad (%s)', (variable, value) => {
    let error: unknown;
    try {
      loadConfig({ DATA_DIR: tmp(), [variable]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
    expect((error as Error).message.split('\n')).toHaveLength(1);
    expect((error as Error).message).toContain(variable);
  });

  it('requires JWT_SECRET in production and generates one once otherwise', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: tmp() })).toThrow(/JWT_SECRET/);
    const dir = tmp();
    const first = loadConfig({ DATA_DIR: dir }).JWT_SECRET;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ DATA_DIR: dir }).JWT_SECRET).toBe(first);
    expect(fs.statSync(path.join(dir, 'jwt-secret')).mode & 0o077).toBe(0);
  });

  it('a bad value stops a role at start-up with one line naming the variable', () => {
    const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
    const r = spawnSync(process.execPath, [path.join(__dirname, '..', '..', 'dist', 'api', 'server.js')], {
      env: { PATH: process.env.PATH, PORT: 'abc', DATA_DIR: tmp() },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^invalid configuration: PORT /);
  });
});
