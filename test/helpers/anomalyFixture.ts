// A generated hourly series with a weekly pattern, for the anomaly job's tests: visits per UTC hour follow the
// day of the week and the hour (Thursdays carry 1.5× Wednesdays), with a small jitter that changes from week
// to week. Every visit has the same shape, so bounce rate, visit duration and error rate stay level:
// - visit i of an hour: a pageview at minute (i·7) mod 50, second i mod 60; a second one 30 s later unless
//   i mod 4 = 3 (a bounce);
// - a Signup custom event 10 s after the first pageview when i mod 5 = 0 (the goal "Signup");
// - a JavaScript error on the first page when i mod 5 = 1.
// Expected values are worked out from these counts in the tests.
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '../../lib/clickhouse/client';
import { chTime, type EventRow } from '../../lib/ingest/job/rows';
import { eventRow, storeRows } from './statsFixture';

export const HOUR = 3_600_000;
export const WEEK = 7 * 24 * HOUR;

/** Visits in an hour for a website of `scale` (1 = the regular fixture; 0.1 = a tiny site). */
export function visitsAt(hour: number, scale = 1): number {
  const d = new Date(hour);
  const h = d.getUTCHours();
  const dow = d.getUTCDay(); // 0 Sunday
  const daytime = h >= 7 && h <= 18 ? 60 : h >= 19 ? 35 : 20;
  const day = dow === 4 ? 1.5 : dow === 0 || dow === 6 ? 0.5 : 1;
  const week = Math.floor(hour / WEEK);
  const jitter = ((week * 7 + h * 3) % 5) - 2;
  return Math.max(0, Math.round((daytime * day + jitter) * scale));
}

/** Pageviews of visits [from, to) of an hour. */
export const pageviewsOf = (from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i++) n += i % 4 === 3 ? 1 : 2;
  return n;
};
/** Signups of visits [from, to). */
export const signupsOf = (from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i++) if (i % 5 === 0) n++;
  return n;
};
/** Errors of visits [from, to). */
export const errorsOf = (from: number, to: number) => {
  let n = 0;
  for (let i = from; i < to; i++) if (i % 5 === 1) n++;
  return n;
};

/** The rows of visits [from, to) of an hour. */
export function visitRows(websiteId: string, hour: number, from: number, to: number): EventRow[] {
  const rows: EventRow[] = [];
  for (let i = from; i < to; i++) {
    const at = hour + ((i * 7) % 50) * 60_000 + (i % 60) * 1000;
    const who = { visitor_id: `v-${hour}-${i}`, session_id: `s-${hour}-${i}` };
    rows.push(eventRow(websiteId, { ...who, pathname: '/', ts: new Date(at).toISOString() }));
    if (i % 4 !== 3)
      rows.push(eventRow(websiteId, { ...who, pathname: '/b', ts: new Date(at + 30_000).toISOString() }));
    if (i % 5 === 0) {
      rows.push(
        eventRow(websiteId, {
          ...who,
          type: 'event',
          name: 'Signup',
          pathname: '/',
          ts: new Date(at + 10_000).toISOString(),
        }),
      );
    }
  }
  return rows;
}

/** Error events of visits [from, to) of an hour (`times` each). */
export function errorRows(websiteId: string, hour: number, from: number, to: number, times = 1) {
  const rows: Record<string, unknown>[] = [];
  for (let i = from; i < to; i++) {
    if (i % 5 !== 1) continue;
    const at = hour + ((i * 7) % 50) * 60_000 + (i % 60) * 1000 + 5000;
    for (let k = 0; k < times; k++) {
      rows.push({
        website_id: websiteId,
        event_id: randomUUID(),
        ts: chTime(at + k),
        session_id: `s-${hour}-${i}`,
        visitor_id: `v-${hour}-${i}`,
        pathname: '/',
        fingerprint: 'f1',
        error_type: 'TypeError',
        message: 'x is undefined',
        stack: '',
        browser: 'Chrome',
        os: 'Linux',
        device_type: 'desktop',
        expire_at: '2030-01-01 00:00:00',
      });
    }
  }
  return rows;
}

export async function storeErrors(clickhouse: ClickHouseClient, rows: Record<string, unknown>[]): Promise<void> {
  if (rows.length) await clickhouse.insert({ table: 'error_events', values: rows, format: 'JSONEachRow' });
}

/** Stores the regular series of every hour of [from, to) (UTC hour starts) but `skip`, in batches. */
export async function storeSeries(
  clickhouse: ClickHouseClient,
  websiteId: string,
  from: number,
  to: number,
  opts: { scale?: number; skip?: readonly number[] } = {},
): Promise<void> {
  let rows: EventRow[] = [];
  let errors: Record<string, unknown>[] = [];
  for (let h = from; h < to; h += HOUR) {
    if (opts.skip?.includes(h)) continue;
    const n = visitsAt(h, opts.scale);
    rows.push(...visitRows(websiteId, h, 0, n));
    errors.push(...errorRows(websiteId, h, 0, n));
    if (rows.length > 20_000) {
      await storeRows(clickhouse, rows);
      await storeErrors(clickhouse, errors);
      rows = [];
      errors = [];
    }
  }
  await storeRows(clickhouse, rows);
  await storeErrors(clickhouse, errors);
}
