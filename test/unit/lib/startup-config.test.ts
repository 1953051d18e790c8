// `.env` under the process environment, and the Node.js version check against package.json's engines.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, environment, loadConfig } from '../../../lib/config';
import { PROJECT_ROOT } from '../../../lib/paths';
import { satisfies, unsupportedNode } from '../../../lib/process/nodeVersion';

describe('.env', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-env-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is read from the working directory, and the process environment wins over it', () => {
    fs.writeFileSync(
      path.join(dir, '.env'),
      '# comment\nPORT=4100\nREDIS_PREFIX="from_file"\nexport LOG_LEVEL=warn\nDATABASE_URL=postgres://u@db.example:5432/x\n',
    );
    const env = environment(dir, { REDIS_PREFIX: 'from_env' });
    const config = loadConfig({ ...env, DATA_DIR: dir, JWT_SECRET: 'x'.repeat(32) });
    expect(config.PORT).toBe(4100);
    expect(config.REDIS_PREFIX).toBe('from_env');
    expect(config.DATABASE_URL).toBe('postgres://u@db.example:5432/x');
  });

  it('is optional, and a bad value in it is named like any other', () => {
    expect(environment(dir, { PORT: '1' })).toEqual({ PORT: '1' });
    fs.writeFileSync(path.join(dir, '.env'), 'PORT=eighty\n');
    expect(() => loadConfig({ ...environment(dir, {}), DATA_DIR: dir })).toThrow(ConfigError);
    expect(() => loadConfig({ ...environment(dir, {}), DATA_DIR: dir })).toThrow(/^invalid configuration: PORT /);
  });

  it('that cannot be read stops the start with a ConfigError naming it', () => {
    fs.mkdirSync(path.join(dir, '.env'));
    expect(() => environment(dir, {})).toThrow(/^invalid configuration: \.env cannot be read/);
  });

  it('is listed in full by .env.example: every variable the configuration reads', () => {
    const example = fs.readFileSync(path.join(PROJECT_ROOT, '.env.example'), 'utf8');
    const listed = new Set([...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]));
    const source = fs.readFileSync(path.join(PROJECT_ROOT, 'lib', 'config.ts'), 'utf8');
    const schema = source.slice(
      source.indexOf('const envSchema = z.object({'),
      source.indexOf('});', source.indexOf('const envSchema')),
    );
    const read = [...schema.matchAll(/^\s{2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]);
    expect(read.length).toBeGreaterThan(20);
    expect(read.filter((v) => !listed.has(v))).toEqual([]);
  });
});

describe('the Node.js version check', () => {
  it('reads engines ranges', () => {
    const range = '>=20.12 <21 || >=22';
    expect(satisfies('v20.12.0', range)).toBe(true);
    expect(satisfies('v20.20.2', range)).toBe(true);
    expect(satisfies('v20.11.1', range)).toBe(false);
    expect(satisfies('v21.7.0', range)).toBe(false);
    expect(satisfies('v22.0.0', range)).toBe(true);
    expect(satisfies('v18.19.0', range)).toBe(false);
  });

  it('accepts this Node.js and refuses an old one with one line naming the range', () => {
    expect(unsupportedNode()).toBeUndefined();
    expect(unsupportedNode('v18.20.0')).toMatch(
      /^Node\.js v18\.20\.0 is not supported: Tidemark needs node >=20\.12 <21 \|\| >=22/,
    );
  });
});
