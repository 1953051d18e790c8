// Exchange rates the operator sets (`tidemark admin rates`), dated, for converting purchases into a website's
// revenue currency. A rate is US dollars per one unit of the currency, valid from its date until a later date
// of the same currency; USD is 1 by definition (sql/postgres/014_ltv.sql).
import type { Pool } from 'pg';
import { z } from '../zod';

export const currencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter currency code')
  .transform((c) => c.toUpperCase())
  .refine((c) => c !== 'USD', 'USD is the base of every rate (always 1); set the other currency instead');
export const rateValue = z
  .string()
  .regex(/^\d{1,12}(\.\d{1,10})?$/, 'must be a positive decimal number (US dollars per unit), e.g. 1.08')
  .refine((v) => Number(v) > 0, 'must be greater than 0');

export interface ExchangeRate {
  currency: string;
  /** YYYY-MM-DD */
  effective_date: string;
  usd_per_unit: number;
}

/** Sets (or replaces) the rate of `currency` from `date` on. */
export async function setRate(pool: Pool, currency: string, usdPerUnit: string, date: string): Promise<ExchangeRate> {
  const { rows } = await pool.query<ExchangeRate>(
    `INSERT INTO exchange_rates (currency, effective_date, usd_per_unit) VALUES ($1, $2, $3)
     ON CONFLICT (currency, effective_date) DO UPDATE SET usd_per_unit = EXCLUDED.usd_per_unit, updated_at = now()
     RETURNING currency, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, usd_per_unit::float8 AS usd_per_unit`,
    [currency, date, usdPerUnit],
  );
  return rows[0];
}

export async function listRates(pool: Pool, currency?: string): Promise<ExchangeRate[]> {
  const { rows } = await pool.query<ExchangeRate>(
    `SELECT currency, to_char(effective_date, 'YYYY-MM-DD') AS effective_date, usd_per_unit::float8 AS usd_per_unit
     FROM exchange_rates WHERE $1::text IS NULL OR currency = $1 ORDER BY currency, effective_date`,
    [currency ?? null],
  );
  return rows;
}

/**
 * One step of a conversion into a target currency: from `since` on (until the currency's next step), an
 * amount in `currency` is worth `factor` units of the target. Steps are ordered by currency, then date.
 */
export interface ConversionStep {
  currency: string;
  since: string;
  factor: number;
}

/**
 * The steps converting every rated currency (and USD) into `target`: rate(currency) / rate(target), each the
 * latest dated on or before the day, at every date where either changes. A day before one of the two has
 * any rate has no step, so a purchase on it finds none and is left out.
 */
export function conversionSteps(rates: readonly ExchangeRate[], target: string): ConversionStep[] {
  const byCurrency = new Map<string, ExchangeRate[]>();
  for (const r of rates) byCurrency.set(r.currency, [...(byCurrency.get(r.currency) ?? []), r]);
  const history = (c: string) => byCurrency.get(c) ?? [];
  // The rate in force on `day` (dates compare as text in YYYY-MM-DD); USD is always 1.
  const rateOn = (c: string, day: string): number | undefined => {
    if (c === 'USD') return 1;
    let found: number | undefined;
    for (const r of history(c)) if (r.effective_date <= day) found = r.usd_per_unit;
    return found;
  };
  const steps: ConversionStep[] = [];
  const currencies = [...new Set(['USD', ...byCurrency.keys()])].filter((c) => c !== target).sort();
  for (const c of currencies) {
    const dates = [...new Set([...history(c), ...history(target)].map((r) => r.effective_date))].sort();
    for (const since of dates) {
      const from = rateOn(c, since);
      const to = rateOn(target, since);
      if (from !== undefined && to !== undefined) steps.push({ currency: c, since, factor: from / to });
    }
  }
  return steps;
}
