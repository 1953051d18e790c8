// Running `tidemark` commands in-process against a test context's resources.
import type { Io } from '../../cli/context';
import type { TestContext } from './context';

export function captureIo(stdin = ''): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t), stdin: async () => stdin };
}

/** The environment that points the CLI at `ctx`'s databases, Redis prefix and data directory. */
export function cliEnv(ctx: Pick<TestContext, 'config'>): Record<string, string> {
  const c = ctx.config;
  return {
    NODE_ENV: 'test',
    DATABASE_URL: c.DATABASE_URL,
    REDIS_URL: c.REDIS_URL,
    REDIS_PREFIX: c.REDIS_PREFIX,
    CLICKHOUSE_URL: c.CLICKHOUSE_URL,
    CLICKHOUSE_PASSWORD: c.CLICKHOUSE_PASSWORD,
    CLICKHOUSE_DATABASE: c.CLICKHOUSE_DATABASE,
    DATA_DIR: c.DATA_DIR,
    JWT_SECRET: c.JWT_SECRET,
    PUBLIC_URL: c.PUBLIC_URL,
    DEFAULT_PLAN: c.DEFAULT_PLAN,
  };
}
