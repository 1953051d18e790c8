// Stats v2 answers as CSV: a timeseries or breakdown answer's rows under a header of the row key column
// (date, or the property's short name) and the requested metrics, in the order requested.
import { propertyRowKey } from '../stats/api';
import type { StatsEndpoint, StatsParams } from '../stats/params';
import { type ResolvedPeriod, resolvePeriod } from '../stats/period';
import { formatDate, today } from '../stats/time';
import { type CsvValue, csvChunks, safeFileName } from './csv';

export type CsvEndpoint = Exclude<StatsEndpoint, 'aggregate'>;

/** The columns of an endpoint's CSV: the row key, then the metrics. */
export function csvColumns(endpoint: CsvEndpoint, params: Pick<StatsParams, 'metrics' | 'property'>): string[] {
  const key = endpoint === 'timeseries' ? 'date' : propertyRowKey(params.property!);
  return [key, ...params.metrics];
}

type AnswerValue = CsvValue | { value: number; currency: string };

/** A revenue metric's money ({value, currency}) is its value: every amount is in the website's one currency. */
function cells(row: Record<string, AnswerValue>): Record<string, CsvValue> {
  return Object.fromEntries(
    Object.entries(row).map(([k, v]) => [k, v !== null && typeof v === 'object' ? v.value : v]),
  );
}

/** The CSV text of a timeseries or breakdown answer (statsResponse), in stream-sized pieces. */
export function statsCsv(
  endpoint: CsvEndpoint,
  params: Pick<StatsParams, 'metrics' | 'property'>,
  answer: { results: unknown },
): Iterable<string> {
  const rows = answer.results as Record<string, AnswerValue>[];
  return csvChunks(
    csvColumns(endpoint, params),
    (function* () {
      for (const row of rows) yield cells(row);
    })(),
  );
}

/** The local dates a request's period covers in the website's time zone. */
export function periodDates(params: Pick<StatsParams, 'period' | 'date'>, timeZone: string): ResolvedPeriod {
  return resolvePeriod(params.period, params.date ?? today(timeZone), timeZone) as ResolvedPeriod; // checked already
}

/** `shop.example.com-breakdown-country-2026-03-01-2026-03-30.csv` and the like. */
export function statsCsvFileName(
  domain: string,
  endpoint: CsvEndpoint,
  params: Pick<StatsParams, 'property' | 'interval' | 'period' | 'date'>,
  timeZone: string,
): string {
  const { first, last } = periodDates(params, timeZone);
  const what = endpoint === 'timeseries' ? params.interval : propertyRowKey(params.property!);
  return safeFileName(`${domain}-${endpoint}-${what}-${formatDate(first)}-${formatDate(last)}.csv`);
}
