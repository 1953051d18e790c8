// Numbers as insights write them (English, fixed so that the same data gives the same words on every server).

/** A count or amount with thousands separators and at most `digits` decimals. */
export function num(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** A signed percentage with one decimal: +32.5%, −12%. */
export function signedPct(p: number): string {
  const s = num(Math.abs(p), 1);
  return `${p < 0 ? '−' : '+'}${s}%`;
}

export function money(n: number, currency: string): string {
  return `${num(n, 2)} ${currency}`;
}

/** Percent change from `before` to `now`, one decimal; null when `before` is zero (nothing to compare with). */
export function pctChange(now: number, before: number): number | null {
  if (!Number.isFinite(now) || !Number.isFinite(before) || before === 0) return null;
  return Math.round(((now - before) / before) * 1000) / 10;
}

/** A finite number or 0: no NaN or Infinity ever reaches a row or a response. */
export const finite = (n: number): number => (Number.isFinite(n) ? n : 0);
