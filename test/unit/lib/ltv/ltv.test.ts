// Pure parts of lifetime value: conversion steps from dated rates, cohort rows from the store's cells.

import { conversionSteps, type ExchangeRate } from '../../../../lib/ltv/rates';
import { cohortRows } from '../../../../lib/ltv/snapshot';

const rate = (currency: string, effective_date: string, usd_per_unit: number): ExchangeRate => ({
  currency,
  effective_date,
  usd_per_unit,
});
const RATES = [rate('EUR', '2026-01-01', 1.1), rate('EUR', '2026-03-01', 1.2), rate('GBP', '2026-02-01', 1.25)];

describe('conversionSteps', () => {
  it('into USD: each rate as it is, from its date', () => {
    expect(conversionSteps(RATES, 'USD')).toEqual([
      { currency: 'EUR', since: '2026-01-01', factor: 1.1 },
      { currency: 'EUR', since: '2026-03-01', factor: 1.2 },
      { currency: 'GBP', since: '2026-02-01', factor: 1.25 },
    ]);
  });

  it('into another currency: cross rates through USD at every date either side changes, none before both exist', () => {
    expect(conversionSteps(RATES, 'EUR')).toEqual([
      // GBP → EUR: no step on 1 January (no GBP rate yet); from 1 February 1.25/1.1, from 1 March 1.25/1.2.
      { currency: 'GBP', since: '2026-02-01', factor: 1.25 / 1.1 },
      { currency: 'GBP', since: '2026-03-01', factor: 1.25 / 1.2 },
      { currency: 'USD', since: '2026-01-01', factor: 1 / 1.1 },
      { currency: 'USD', since: '2026-03-01', factor: 1 / 1.2 },
    ]);
  });

  it('no rates: no steps (only the target currency itself counts)', () => {
    expect(conversionSteps([], 'USD')).toEqual([]);
    expect(conversionSteps([], 'EUR')).toEqual([]);
  });
});

describe('cohortRows', () => {
  const asOf = { year: 2026, month: 3, day: 31 };
  it('cumulative revenue per customer up to the as-of period, zero-revenue periods carried, to the cent', () => {
    expect(
      cohortRows(
        [
          { granularity: 'monthly', cohort: '2026-01-01', period: -1, customers: 3, revenue: 0 },
          { granularity: 'monthly', cohort: '2026-01-01', period: 0, customers: 0, revenue: 100 },
          { granularity: 'monthly', cohort: '2026-01-01', period: 2, customers: 0, revenue: -10 },
          { granularity: 'weekly', cohort: '2026-03-23', period: -1, customers: 1, revenue: 0 },
          { granularity: 'weekly', cohort: '2026-03-23', period: 1, customers: 0, revenue: 5 },
        ],
        asOf,
      ),
    ).toEqual([
      { granularity: 'monthly', cohort_date: '2026-01-01', customers: 3, cumulative: [33.33, 33.33, 30] },
      { granularity: 'weekly', cohort_date: '2026-03-23', customers: 1, cumulative: [0, 5] },
    ]);
  });
});
