// Running `tidemark` commands in-process against a test context's resources.
import type { Io } from '../../cli/context';
import type { TestContext } from './context';
import { roleEnv } from './web-process';

export function captureIo(stdin = ''): Io & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t), stdin: async () => stdin };
}

/** The environment that points the CLI at `ctx`'s databases, Redis prefix and data directory. */
export function cliEnv(ctx: Pick<TestContext, 'config'>): Record<string, string> {
  const c = ctx.config;
  const role = Object.entries(roleEnv(c, c.PORT)).filter((e): e is [string, string] => e[1] !== undefined);
  return { ...Object.fromEntries(role), PUBLIC_URL: c.PUBLIC_URL, DEFAULT_PLAN: c.DEFAULT_PLAN };
}
