// The weekly and monthly email report (docs/notifications.md): a website's visitors, pageviews, bounce rate, top
// sources and pages and goal completions over a closed period, each against the period before, read through
// the stats query model and written as HTML with a plain-text part.
import type { Pool } from 'pg';
import { conversionContext } from '../accounts/goals';
import type { ClickHouseClient } from '../clickhouse/client';
import { escapeHtml } from '../public/html';
import { runConversions } from '../stats/conversions';
import type { StatsRow } from '../stats/model';
import { byMetricDesc, runStats } from '../stats/run';
import { addDays, addMonths, formatDate, type LocalDate, monthName, startOfDay } from '../stats/time';

export type ReportKind = 'weekly' | 'monthly';

export interface ReportPeriod {
  first: LocalDate;
  last: LocalDate;
}

/** Rows of the top sources and pages in a report. */
export const REPORT_TOP = 5;

/**
 * The period a report sent on `day` covers: the week (Monday to Sunday) before a Monday, the month before a
 * 1st; undefined on any other day.
 */
export function reportPeriod(kind: ReportKind, day: LocalDate): ReportPeriod | undefined {
  const weekday = new Date(Date.UTC(day.year, day.month - 1, day.day)).getUTCDay();
  if (kind === 'weekly') return weekday === 1 ? { first: addDays(day, -7), last: addDays(day, -1) } : undefined;
  return day.day === 1 ? { first: addMonths(day, -1), last: addDays(day, -1) } : undefined;
}

/** The period of the same kind just before. */
export function previousReportPeriod(kind: ReportKind, p: ReportPeriod): ReportPeriod {
  if (kind === 'weekly') return { first: addDays(p.first, -7), last: addDays(p.first, -1) };
  return { first: addMonths(p.first, -1), last: addDays(p.first, -1) };
}

export const periodKey = (p: ReportPeriod) => `${formatDate(p.first)}..${formatDate(p.last)}`;

interface Figures {
  visitors: number;
  pageviews: number;
  bounceRate: number;
  sources: Map<string, number>;
  pages: Map<string, number>;
  goals: Map<string, number>;
}

export interface ReportRow {
  name: string;
  value: number;
  previous: number;
}

export interface ReportData {
  kind: ReportKind;
  site: { name: string; domain: string };
  period: ReportPeriod;
  previous: ReportPeriod;
  visitors: ReportRow;
  pageviews: ReportRow;
  bounceRate: ReportRow;
  /** By visitors, at most REPORT_TOP. */
  sources: ReportRow[];
  /** By pageviews, at most REPORT_TOP. */
  pages: ReportRow[];
  /** Every goal, completions as converted visitors. */
  goals: ReportRow[];
}

const top = (rows: StatsRow[], metric: 'visitors' | 'pageviews') =>
  new Map(
    rows
      .filter((r) => r.key !== '' && (r.values[metric] ?? 0) > 0)
      .sort(byMetricDesc(metric))
      .map((r) => [r.key, r.values[metric] ?? 0]),
  );

async function figures(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string },
  conversions: Awaited<ReturnType<typeof conversionContext>>,
  p: ReportPeriod,
): Promise<Figures> {
  const base = {
    websiteId: site.id,
    timeZone: site.timezone,
    start: startOfDay(p.first, site.timezone),
    end: startOfDay(addDays(p.last, 1), site.timezone),
    filters: [],
  };
  const [[total], sources, pages, goals] = await Promise.all([
    runStats(clickhouse, { ...base, metrics: ['visitors', 'pageviews', 'bounce_rate'] }),
    runStats(clickhouse, { ...base, metrics: ['visitors'], dimension: 'source' }),
    runStats(clickhouse, { ...base, metrics: ['pageviews'], dimension: 'page' }),
    conversions.goals.length
      ? runConversions(clickhouse, {
          ...base,
          conversionFilters: [],
          goals: conversions.goals,
          currency: conversions.currency,
          metrics: ['visitors'],
          dimension: 'goal',
        })
      : Promise.resolve([]),
  ]);
  return {
    visitors: total?.values.visitors ?? 0,
    pageviews: total?.values.pageviews ?? 0,
    bounceRate: total?.values.bounce_rate ?? 0,
    sources: top(sources, 'visitors'),
    pages: top(pages, 'pageviews'),
    goals: new Map(goals.map((r) => [r.key, r.values.visitors ?? 0])),
  };
}

export async function buildReport(
  pool: Pool,
  clickhouse: ClickHouseClient,
  site: { id: string; name: string; domain: string; timezone: string },
  kind: ReportKind,
  period: ReportPeriod,
): Promise<ReportData> {
  const previous = previousReportPeriod(kind, period);
  const conversions = await conversionContext(pool, site.id);
  const [now, before] = await Promise.all([
    figures(clickhouse, site, conversions, period),
    figures(clickhouse, site, conversions, previous),
  ]);
  const rows = (current: Map<string, number>, earlier: Map<string, number>) =>
    [...current].slice(0, REPORT_TOP).map(([name, value]) => ({ name, value, previous: earlier.get(name) ?? 0 }));
  return {
    kind,
    site: { name: site.name, domain: site.domain },
    period,
    previous,
    visitors: { name: 'Visitors', value: now.visitors, previous: before.visitors },
    pageviews: { name: 'Pageviews', value: now.pageviews, previous: before.pageviews },
    bounceRate: { name: 'Bounce rate', value: now.bounceRate, previous: before.bounceRate },
    sources: rows(now.sources, before.sources),
    pages: rows(now.pages, before.pages),
    goals: conversions.goals
      .filter((g) => g.is_active || (now.goals.get(g.name) ?? 0) > 0)
      .map((g) => ({ name: g.name, value: now.goals.get(g.name) ?? 0, previous: before.goals.get(g.name) ?? 0 })),
  };
}

// ---- rendering ----------------------------------------------------------------------------------------------

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

const shortDate = (d: LocalDate) => `${d.day} ${monthName(d.month).slice(0, 3)} ${d.year}`;

/** "16–22 Nov 2026" for a week, "November 2026" for a month. */
export function periodLabel(kind: ReportKind, p: ReportPeriod): string {
  if (kind === 'monthly') return `${monthName(p.first.month)} ${p.first.year}`;
  return `${shortDate(p.first)} – ${shortDate(p.last)}`;
}

/** A count's change as a percentage ("+25%", "−10%", "new" from zero, "no change"). */
export function countChange(value: number, previous: number): string {
  if (previous === 0) return value === 0 ? 'no change' : 'new';
  const pct = Math.round(((value - previous) / previous) * 100);
  if (pct === 0) return 'no change';
  return pct > 0 ? `+${pct}%` : `−${-pct}%`;
}

/** A rate's change in percentage points ("+5 pts", "−2.5 pts"). */
export function pointChange(value: number, previous: number): string {
  const pts = Math.round((value - previous) * 10) / 10;
  if (pts === 0) return 'no change';
  return pts > 0 ? `+${pts} pts` : `−${-pts} pts`;
}

const percent = (v: number) => `${Math.round(v * 10) / 10}%`;

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

export function renderReport(r: ReportData, unsubscribeLink: string): RenderedMail {
  const label = periodLabel(r.kind, r.period);
  const title = `${r.kind === 'weekly' ? 'Weekly' : 'Monthly'} report for ${r.site.name}: ${label}`;
  const against = `against ${periodLabel(r.kind, r.previous)}`;
  const headline: [string, string, string][] = [
    [r.visitors.name, integer.format(r.visitors.value), countChange(r.visitors.value, r.visitors.previous)],
    [r.pageviews.name, integer.format(r.pageviews.value), countChange(r.pageviews.value, r.pageviews.previous)],
    [r.bounceRate.name, percent(r.bounceRate.value), pointChange(r.bounceRate.value, r.bounceRate.previous)],
  ];
  const tables: [string, string, ReportRow[]][] = [
    ['Top sources', 'visitors', r.sources],
    ['Top pages', 'pageviews', r.pages],
    ['Goals', 'completions', r.goals],
  ];
  const listed = (rows: ReportRow[]): [string, string, string][] =>
    rows.map((row) => [row.name, integer.format(row.value), countChange(row.value, row.previous)]);

  const text = [
    title,
    `${r.site.domain}, ${against}`,
    '',
    ...headline.map(([n, v, c]) => `${n}: ${v} (${c})`),
    ...tables.flatMap(([heading, unit, rows]) => [
      '',
      `${heading} (${unit}):`,
      ...(rows.length ? listed(rows).map(([n, v, c]) => `  ${n}: ${v} (${c})`) : ['  none']),
    ]),
    '',
    `Stop these emails: ${unsubscribeLink}`,
    '',
  ].join('\n');

  const cell = 'padding:4px 12px 4px 0;text-align:left';
  const table = (rows: [string, string, string][], head: string[]) =>
    `<table style="border-collapse:collapse"><tr>${head.map((h) => `<th style="${cell}">${escapeHtml(h)}</th>`).join('')}</tr>${rows
      .map((row) => `<tr>${row.map((v) => `<td style="${cell}">${escapeHtml(v)}</td>`).join('')}</tr>`)
      .join('')}</table>`;
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#1f2933">
<h1 style="font-size:20px">${escapeHtml(title)}</h1>
<p>${escapeHtml(r.site.domain)}, ${escapeHtml(against)}</p>
${table(headline, ['', 'This period', 'Change'])}
${tables
  .map(
    ([heading, unit, rows]) =>
      `<h2 style="font-size:16px">${escapeHtml(heading)}</h2>${rows.length ? table(listed(rows), ['', unit, 'Change']) : '<p>none</p>'}`,
  )
  .join('\n')}
<p style="font-size:12px;color:#52606d"><a href="${escapeHtml(unsubscribeLink)}">Unsubscribe</a> from ${escapeHtml(r.site.name)}'s reports and alerts.</p>
</body></html>`;
  return { subject: title, html, text };
}
