// The only way any role reaches ClickHouse: @clickhouse/client against CLICKHOUSE_URL, which is the embedded
// store role by default and a real server or cluster in a scaled deployment (DESIGN §1).
import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import type { Config } from '../config';

export type { ClickHouseClient };

export interface ClickHouseTarget {
  url: string;
  database: string;
  /** Sent as Basic auth: CLICKHOUSE_USER [default] and CLICKHOUSE_PASSWORD (the embedded store's credential). */
  username?: string;
  password?: string;
}

type TargetConfig = Pick<Config, 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'CLICKHOUSE_USER' | 'CLICKHOUSE_PASSWORD'>;

/** Where and as whom this install reaches ClickHouse; `database` overrides CLICKHOUSE_DATABASE (e.g. `default`). */
export function clickHouseTarget(config: TargetConfig, database = config.CLICKHOUSE_DATABASE): ClickHouseTarget {
  return {
    url: config.CLICKHOUSE_URL,
    database,
    username: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
  };
}

export function createClickHouse(target: ClickHouseTarget, opts: { requestTimeoutMs?: number } = {}): ClickHouseClient {
  return createClient({
    url: target.url,
    database: target.database,
    username: target.username ?? 'default',
    password: target.password ?? '',
    request_timeout: opts.requestTimeoutMs ?? 60_000,
    // Event ids and counters are 64-bit; keep them exact as strings rather than lossy JS numbers.
    clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    application: 'tidemark',
    // Callers handle and log failures themselves; the client's own logger would print to the console.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** Rows of a SELECT with bound `{name:Type}` parameters, as JSON objects. */
export async function selectRows<T>(
  clickhouse: ClickHouseClient,
  query: string,
  params: Record<string, unknown>,
): Promise<T[]> {
  return (await clickhouse.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

/**
 * The same client, every query of which is cancelled when `signal` aborts: the HTTP request to the store is
 * dropped (a server cancels a read-only query whose client went away) and the caller's promise rejects.
 */
export function withAbortSignal(clickhouse: ClickHouseClient, signal: AbortSignal): ClickHouseClient {
  return new Proxy(clickhouse, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return (params: Parameters<ClickHouseClient['query']>[0]) => target.query({ ...params, abort_signal: signal });
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
