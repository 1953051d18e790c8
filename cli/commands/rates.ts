// `tidemark admin rates set|list`: the dated exchange rates lifetime value converts purchases with
// (lib/ltv/rates.ts says what a rate means).
import { currencyCode, listRates, rateValue, setRate } from '../../lib/ltv/rates';
import { parseDate } from '../../lib/stats/time';
import { type Context, parseWith, printRows, UsageError, type Values } from '../context';

export async function runRatesSet(v: Values, ctx: Context): Promise<void> {
  const { currency: code, rate: value } = v;
  if (typeof code !== 'string' || typeof value !== 'string' || value === undefined)
    throw new UsageError('give a currency and a rate, e.g. EUR 1.08');
  const currency = parseWith(currencyCode, code, 'the currency');
  const rate = parseWith(rateValue, value, 'the rate');
  const date = typeof v.date === 'string' ? v.date : new Date().toISOString().slice(0, 10);
  if (!parseDate(date)) throw new UsageError('--date must be a date YYYY-MM-DD');
  const saved = await setRate(await ctx.pool(), currency, rate, date);
  ctx.io.out(`1 ${saved.currency} = ${saved.usd_per_unit} USD from ${saved.effective_date}`);
}

export async function runRatesList(v: Values, ctx: Context): Promise<void> {
  const currency = typeof v.currency === 'string' ? parseWith(currencyCode, v.currency, 'the currency') : undefined;
  const rates = await listRates(await ctx.pool(), currency);
  printRows(ctx.io, rates as unknown as Record<string, unknown>[], v.json === true, [
    'currency',
    'effective_date',
    'usd_per_unit',
  ]);
}
