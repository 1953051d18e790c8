// Reaching PostgreSQL, Redis and ClickHouse while a role starts: bounded retries with backoff, a JSON warn line
// per failed try, and in the end one error naming the setting to check, its address (password masked) and why.
import type { Redis } from 'ioredis';
import { type ClickHouseTarget, createClickHouse } from '../clickhouse/client';
import { maskUrlPassword } from '../config';
import { ensureDatabase } from '../db/pool';
import type { Logger } from '../log';
import { waitReady } from '../redis';

/** A start that cannot go on; `setting` is the configuration variable the operator should look at. */
export class StartupError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Dependency {
  /** What is being reached, for people: "PostgreSQL", "Redis", "ClickHouse". */
  service: string;
  /** The variable that names it: DATABASE_URL, REDIS_URL, CLICKHOUSE_URL, STORE_PORT… */
  setting: string;
  url: string;
}

const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;

// Errors that mean "not there (yet)": worth another try while starting. Anything else (a refused password,
// a missing role) will not change by waiting and fails at once.
const UNREACHABLE =
  /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|EPIPE|socket hang up|not reachable|timeout|the database system is starting up|Connection terminated/i;

export function isUnreachableError(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return UNREACHABLE.test(`${e?.code ?? ''} ${e?.message ?? ''}`);
}

/**
 * Runs `attempt` until it succeeds, an error other than "unreachable" occurs, or `waitMs` has passed. The
 * final error is a StartupError naming `dep.setting`; `hint(err)` may give a better one for a specific failure.
 */
export async function reach<T>(
  dep: Dependency,
  attempt: () => Promise<T>,
  opts: {
    logger: Logger;
    waitMs: number;
    hint?: (err: Error) => { setting: string; message: string } | undefined;
    sleep?: (ms: number) => Promise<void>;
  },
): Promise<T> {
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const address = maskUrlPassword(dep.url);
  const deadline = Date.now() + opts.waitMs;
  let delay = FIRST_DELAY_MS;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (caught) {
      const err = caught as Error;
      const reason = errorText(err);
      const specific = opts.hint?.(err);
      if (specific) throw new StartupError(specific.setting, specific.message);
      const retry = isUnreachableError(err) && Date.now() + delay < deadline;
      if (!retry) {
        const what = isUnreachableError(err)
          ? `not reachable after ${tries} ${tries === 1 ? 'try' : 'tries'} in ${Math.round(opts.waitMs / 1000)} s`
          : 'refused the connection';
        throw new StartupError(
          dep.setting,
          `${dep.setting}: ${dep.service} at ${address} ${what} (${reason}); check that ${dep.service} is running and ${dep.setting} is right`,
        );
      }
      opts.logger.warn(
        { setting: dep.setting, address, err: reason, try: tries, retryInMs: delay },
        `${dep.service} not reachable yet`,
      );
      await sleep(delay);
      delay = Math.min(MAX_DELAY_MS, delay * 2);
    }
  }
}

function errorText(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  // AggregateError (several addresses tried) carries the useful text in its parts.
  const parts = err instanceof AggregateError ? err.errors.map((e: Error) => e.message) : [];
  const message = (parts.length ? [...new Set(parts)].join('; ') : err.message).split('\n')[0].slice(0, 300);
  return code && !message.includes(code) ? `${code}: ${message}` : message || code || 'unknown error';
}

/** PostgreSQL answers, and the database in DATABASE_URL exists (created when missing). */
export function reachPostgres(databaseUrl: string, logger: Logger, waitMs: number): Promise<void> {
  return reach(
    { service: 'PostgreSQL', setting: 'DATABASE_URL', url: databaseUrl },
    () => ensureDatabase(databaseUrl),
    {
      logger,
      waitMs,
    },
  );
}

/** The Redis client is connected and ready. */
export function reachRedis(client: Redis, setting: string, url: string, logger: Logger, waitMs: number): Promise<void> {
  return reach({ service: 'Redis', setting, url }, () => waitReady(client, Math.min(2_000, waitMs)), {
    logger,
    waitMs,
    hint: (err) =>
      /NOAUTH|WRONGPASS|invalid password/i.test(err.message)
        ? {
            setting,
            message: `${setting}: Redis at ${maskUrlPassword(url)} refused the password (${err.message.split('\n')[0]})`,
          }
        : undefined,
  });
}

/**
 * ClickHouse answers an authenticated query (through its always-present `default` database: the instance's own
 * may not exist yet). The embedded store's setting is STORE_PORT, a server's CLICKHOUSE_URL.
 */
export async function reachClickHouse(
  target: ClickHouseTarget,
  embedded: boolean,
  logger: Logger,
  waitMs: number,
): Promise<void> {
  const setting = embedded ? 'STORE_PORT' : 'CLICKHOUSE_URL';
  const service = embedded ? 'the embedded store' : 'ClickHouse';
  const probe = createClickHouse({ ...target, database: 'default' }, { requestTimeoutMs: 5_000 });
  try {
    await reach(
      { service, setting, url: target.url },
      async () => {
        await (await probe.query({ query: 'SELECT 1', format: 'JSONEachRow' })).json();
      },
      {
        logger,
        waitMs,
        hint: (err) => {
          if (
            !/\b516\b|Authentication failed|AUTHENTICATION_FAILED/i.test(
              `${(err as { code?: string }).code ?? ''} ${err.message}`,
            )
          )
            return undefined;
          return embedded
            ? {
                setting,
                message: `STORE_PORT: the store at ${target.url} refused this instance's credential (DATA_DIR/store-credential): it is another instance's store, or DATA_DIR differs between roles`,
              }
            : {
                setting: 'CLICKHOUSE_PASSWORD',
                message: `CLICKHOUSE_PASSWORD: ClickHouse at ${maskUrlPassword(target.url)} refused CLICKHOUSE_USER/CLICKHOUSE_PASSWORD`,
              };
        },
      },
    );
  } finally {
    await probe.close();
  }
}
