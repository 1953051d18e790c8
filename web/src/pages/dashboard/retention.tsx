// Retention: visitors grouped by the day, week or month of their first-ever visit (cohorts), and the share of
// each cohort seen again in every later period, as a grid shaded by that share. The cohorts are computed
// nightly (jobs/retention.ts) and read from GET /api/external/v1/retention with the signed-in reader's token.
import { useState } from 'preact/hooks';
import type { RetentionData, RetentionRecord } from '../../../../lib/intelligence/retentionSchemas';
import { get } from '../../lib/api';
import { compact, percent } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import { external } from './sections/types';
import './sections/sections.css';
import './retention.css';

type Granularity = 'daily' | 'weekly' | 'monthly';

/** Each view: its tab, how far back its cohorts go (the API's longest range is 90 days), its period's name. */
const VIEWS: Record<Granularity, { label: string; range: string; unit: string }> = {
  daily: { label: 'Daily', range: '30d', unit: 'Day' },
  weekly: { label: 'Weekly', range: '90d', unit: 'Week' },
  monthly: { label: 'Monthly', range: '90d', unit: 'Month' },
};
const TABS = (Object.keys(VIEWS) as Granularity[]).map((id) => ({ id, label: VIEWS[id].label }));
const PERIODS = 12;

/** A cohort's first day in words: 26 Oct 2026, week of 26 Oct 2026, Oct 2026 (dates are the site's calendar). */
function cohortLabel(date: string, g: Granularity): string {
  const d = new Date(`${date}T00:00:00Z`);
  if (g === 'monthly') return d.toLocaleDateString(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
  const day = d.toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
  return g === 'weekly' ? `Week of ${day}` : day;
}

interface CohortRow {
  date: string;
  total: number;
  cells: RetentionRecord[];
}

function byCohort(records: readonly RetentionRecord[]): CohortRow[] {
  const rows = new Map<string, CohortRow>();
  for (const r of records) {
    let row = rows.get(r.cohort_date);
    if (!row) {
      row = { date: r.cohort_date, total: r.total_users, cells: [] };
      rows.set(r.cohort_date, row);
    }
    row.cells[r.period_number] = r;
  }
  // Newest cohorts first: the ones a reader is watching.
  return [...rows.values()].reverse();
}

/**
 * A cell's shade: the accent mixed in from 6 % (no one back) to 55 % (everyone back), a range in which the text
 * colour keeps a 4.5:1 contrast in both themes. Period 0 is everyone by definition, so it stays neutral.
 */
function shade(r: RetentionRecord): Record<string, string> {
  if (r.period_number === 0) return { background: 'var(--surface-2)' };
  return {
    background: `color-mix(in srgb, var(--accent) ${Math.round(6 + r.retention_rate * 0.49)}%, var(--surface))`,
  };
}

export default function Retention({ site }: SectionProps) {
  const [granularity, setGranularity] = useState<Granularity>('weekly');
  const view = VIEWS[granularity];
  const data = useData(
    (signal) =>
      get<RetentionData>(
        external(`/retention/${site.id}?granularity=${granularity}&range=${view.range}&periods=${PERIODS}`),
        { signal },
      ),
    [site.id, granularity],
  );
  const rows = byCohort(data.data?.cohorts ?? []);
  const width = Math.max(0, ...rows.map((r) => r.cells.length));
  const summary = data.data?.summary;
  return (
    <div class="sections">
      <Panel title="Retention" tabs={TABS} active={granularity} onTab={(id) => setGranularity(id as Granularity)}>
        {data.error ? (
          <ErrorNote error={data.error} retry={data.reload} />
        ) : !data.data ? (
          <Loading label="Loading retention…" />
        ) : rows.length === 0 ? (
          <Empty title="No retention cohorts yet">
            Cohorts are computed every night from visitors with a lasting id: those your server sends with a visitorId,
            identified users, and browsers running the tracking script with data-persist="true". Cookieless visitors are
            new each day, so they never count as returning.
          </Empty>
        ) : (
          <>
            <div class="ret-summary" data-testid="retention-summary">
              <div>
                <span class="ret-figure">{percent(summary?.overall_retention ?? 0, 1)}</span>
                <span class="muted small">average return in {view.unit.toLowerCase()} 1</span>
              </div>
              <div>
                <span class="ret-figure">{compact(summary?.total_cohorts ?? 0)}</span>
                <span class="muted small">cohorts</span>
              </div>
              {summary?.best_cohort && summary.best_cohort.retention_rate > 0 && (
                <div>
                  <span class="ret-figure">{percent(summary.best_cohort.retention_rate, 1)}</span>
                  <span class="muted small">best: {cohortLabel(summary.best_cohort.cohort_date, granularity)}</span>
                </div>
              )}
            </div>
            <div class="table-scroll" aria-busy={data.loading}>
              <table class="data ret-grid">
                <caption class="visually-hidden">
                  Share of each cohort seen again, by {view.unit.toLowerCase()} since the first visit
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Cohort</th>
                    <th scope="col" class="num">
                      Visitors
                    </th>
                    {Array.from({ length: width }, (_, p) => (
                      <th key={p} scope="col" class="num">
                        {view.unit} {p}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={row.date}>
                      <th scope="row" class="nowrap">
                        {cohortLabel(row.date, granularity)}
                      </th>
                      <td class="num">{compact(row.total)}</td>
                      {Array.from({ length: width }, (_, p) => {
                        const cell = row.cells[p];
                        return cell ? (
                          <td
                            key={p}
                            class="num ret-cell"
                            style={shade(cell)}
                            data-cohort={row.date}
                            data-period={p}
                            title={`${compact(cell.retained_users)} of ${compact(cell.total_users)} visitors`}
                          >
                            {percent(cell.retention_rate, cell.retention_rate % 1 === 0 ? 0 : 1)}
                          </td>
                        ) : (
                          <td key={p} class="ret-cell ret-future" aria-label="not reached yet" />
                        );
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p class="muted small">
              Cohort = the {view.unit.toLowerCase()} of a visitor’s first-ever visit, in the site’s time zone
              {granularity === 'weekly' && ' (weeks start on Monday)'}; each cell is the share of the cohort seen again
              that {view.unit.toLowerCase()}. Only visitors with a lasting id count; cookieless visitors are new each
              day.
              {data.data.as_of && ` Includes visits up to ${cohortLabel(data.data.as_of, 'daily')}.`}
            </p>
          </>
        )}
      </Panel>
    </div>
  );
}
