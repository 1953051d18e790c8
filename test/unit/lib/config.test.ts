import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig, maskUrlPassword, shownValue } from '../../../lib/config';
import { PROJECT_ROOT } from '../../../lib/paths';

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
      SIGNUP_LIMIT_PER_CLIENT: 5,
      SIGNUP_LIMIT_TOTAL: 50,
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
      TRUST_PROXY: '2',
      ALLOW_SIGNUP: 'false',
      SIGNUP_LIMIT_PER_CLIENT: '7',
      SIGNUP_LIMIT_TOTAL: '70',
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
      TRUST_PROXY: 2,
      ALLOW_SIGNUP: false,
      SIGNUP_LIMIT_PER_CLIENT: 7,
      SIGNUP_LIMIT_TOTAL: 70,
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
    ['TRUST_PROXY', 'true'],
    ['SIGNUP_LIMIT_PER_CLIENT', '0'],
    ['SIGNUP_LIMIT_TOTAL', 'many'],
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

  describe('errors never echo a secret', () => {
    const failure = (env: Record<string, string>): ConfigError => {
      try {
        loadConfig({ DATA_DIR: tmp(), ...env });
      } catch (err) {
        if (err instanceof ConfigError) return err;
        throw err;
      }
      throw new Error('expected a ConfigError');
    };

    it.each([
      ['JWT_SECRET', 'too-short-but-secret'],
      ['METRICS_TOKEN', 'short-token'],
    ])('%s: names the variable, not the value', (variable, value) => {
      const err = failure({ [variable]: value });
      expect(err.variable).toBe(variable);
      expect(err.message).toContain(variable);
      expect(err.message).not.toContain(value);
      expect(err.message.split('\n')).toHaveLength(1);
    });

    it.each(['JWT_SECRET', 'METRICS_TOKEN', 'OPENAI_API_KEY', 'CLICKHOUSE_PASSWORD'])(
      '%s is never shown',
      (variable) => {
        expect(shownValue(variable, 'hunter2-hunter2')).not.toContain('hunter2');
      },
    );

    it.each([
      ['DATABASE_URL', 'mysql://tidemark:hunter2@db.internal:3306/x', 'mysql://tidemark:***@db.internal:3306/x'],
      ['REDIS_URL', 'http://default:hunter2@cache:6379', 'http://default:***@cache:6379'],
      ['DEDUPE_REDIS_URL', 'redis://u:hunter2@bad host:6379', 'redis://***@bad host:6379'],
      ['CLICKHOUSE_URL', 'ftp://admin:hunter2@ch:8123', 'ftp://admin:***@ch:8123'],
    ])('%s: shows the URL with its password replaced by ***', (variable, value, shown) => {
      const err = failure({ [variable]: value });
      expect(err.variable).toBe(variable);
      expect(err.message).not.toContain('hunter2');
      expect(err.message).toContain(shown);
    });

    it.each([
      ['postgres://db.internal/x?password=hunter2', 'postgres://db.internal/x?password=***'],
      [
        'postgres://u@db/x?sslmode=verify-full&sslpassword=hunter2&application_name=tm',
        'postgres://u@db/x?sslmode=verify-full&sslpassword=***&application_name=tm',
      ],
      ['postgres://u:hunter1@db/x?sslpassword=hunter2', 'postgres://u:***@db/x?sslpassword=***'],
      ['redis://cache:6379/0?token=hunter2#x', 'redis://cache:6379/0?token=***#x'],
      ['https://ch:8443/?API_KEY=hunter2&client_secret=hunter2', 'https://ch:8443/?API_KEY=***&client_secret=***'],
      ['https://ch/?pass%77ord=hunter2', 'https://ch/?pass%77ord=***'],
      ['host=db password=hunter2 dbname=x', 'host=db password=*** dbname=x'],
      ["host=db password='hunter2 with space' dbname=x", 'host=db password=*** dbname=x'],
    ])('masks secret parameters: %s', (value, shown) => {
      expect(maskUrlPassword(value)).toBe(shown);
    });

    it('masks a password given as a query parameter in a configuration error', () => {
      const err = failure({ DATABASE_URL: 'mysql://db.internal/x?sslmode=require&password=hunter2' });
      expect(err.variable).toBe('DATABASE_URL');
      expect(err.message).not.toContain('hunter2');
      expect(err.message).toContain('mysql://db.internal/x?sslmode=require&password=***');
    });

    it('leaves a URL without a password and a plain value as they are', () => {
      expect(maskUrlPassword('postgres://db/x?sslmode=require&application_name=tm')).toBe(
        'postgres://db/x?sslmode=require&application_name=tm',
      );
      expect(maskUrlPassword('redis://cache:6379')).toBe('redis://cache:6379');
      expect(maskUrlPassword('postgres://user@db/x')).toBe('postgres://user@db/x');
      expect(failure({ PORT: 'eighty' }).message).toContain('"eighty"');
    });
  });

  it('requires JWT_SECRET in production and generates one once otherwise', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', DATA_DIR: tmp() })).toThrow(/JWT_SECRET/);
    const dir = tmp();
    const first = loadConfig({ DATA_DIR: dir }).JWT_SECRET;
    expect(first.length).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ DATA_DIR: dir }).JWT_SECRET).toBe(first);
    expect(fs.statSync(path.join(dir, 'jwt-secret')).mode & 0o077).toBe(0);
  });

  it('creates a missing DATA_DIR private (0700) and leaves the mode of an existing one alone', () => {
    const embedded = path.join(tmp(), 'new', 'data');
    loadConfig({ DATA_DIR: embedded });
    expect(fs.statSync(embedded).mode & 0o777).toBe(0o700);
    // With a ClickHouse server only the development JWT secret is kept there.
    const server = path.join(tmp(), 'data');
    loadConfig({ DATA_DIR: server, CLICKHOUSE_URL: 'http://ch:8123' });
    expect(fs.statSync(server).mode & 0o777).toBe(0o700);
    expect(fs.existsSync(path.join(server, 'jwt-secret'))).toBe(true);
    const operators = tmp();
    fs.chmodSync(operators, 0o750);
    loadConfig({ DATA_DIR: operators });
    expect(fs.statSync(operators).mode & 0o777).toBe(0o750);
  });

  it('CLICKHOUSE_PASSWORD is the embedded store credential kept under DATA_DIR unless set; a server gets what is set', () => {
    const dir = tmp();
    const embedded = loadConfig({ DATA_DIR: dir });
    expect(embedded.CLICKHOUSE_USER).toBe('default');
    expect(embedded.CLICKHOUSE_PASSWORD).toBe(fs.readFileSync(path.join(dir, 'store-credential'), 'utf8'));
    expect(fs.statSync(path.join(dir, 'store-credential')).mode & 0o777).toBe(0o600);
    expect(loadConfig({ DATA_DIR: dir }).CLICKHOUSE_PASSWORD).toBe(embedded.CLICKHOUSE_PASSWORD);
    expect(loadConfig({ DATA_DIR: dir, CLICKHOUSE_PASSWORD: 'chosen-by-the-operator' }).CLICKHOUSE_PASSWORD).toBe(
      'chosen-by-the-operator',
    );
    const server = tmp();
    const remote = loadConfig({ DATA_DIR: server, CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_USER: 'tidemark' });
    expect(remote).toMatchObject({ CLICKHOUSE_USER: 'tidemark', CLICKHOUSE_PASSWORD: '', EMBEDDED_STORE: false });
    expect(fs.existsSync(path.join(server, 'store-credential'))).toBe(false);
    expect(() => loadConfig({ DATA_DIR: dir, CLICKHOUSE_USER: 'a:b' })).toThrow(/CLICKHOUSE_USER/);
  });

  it('a bad value stops a role at start-up with one line naming the variable', () => {
    const { spawnSync } = require('node:child_process') as typeof import('node:child_process');
    const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'dist', 'api', 'server.js')], {
      env: { PATH: process.env.PATH, PORT: 'abc', DATA_DIR: tmp() },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).not.toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const fatal = JSON.parse(lines[0]);
    expect(fatal).toMatchObject({ level: 60, role: 'web', setting: 'PORT' });
    expect(fatal.msg).toMatch(/^invalid configuration: PORT /);
  });
});
