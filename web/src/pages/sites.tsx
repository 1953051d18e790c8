// The sites list: every website the user can read, each with its visitors per day over the last 7 days (a
// sparkline) and the 7 days' unique visitors, from Stats v2 like any script would ask. Each site's figures
// load on their own, so one slow or failing site does not hold up the list.
import { get, post } from '../lib/api';
import { compact } from '../lib/format';
import { Link } from '../lib/router';
import type { Website, WebsiteList } from '../lib/types';
import { useData } from '../lib/useData';
import { Shell } from '../ui/layout';
import { Sparkline } from '../ui/sparkline';
import { Empty, ErrorNote, Loading } from '../ui/states';
import { metricValue, type V2Result } from './dashboard/query';
import './sites.css';

interface Week {
  labels: string[];
  values: number[];
  /** Unique visitors over the 7 days (not the sum of the days: a visitor back on two days counts once). */
  total: number;
}

async function lastWeek(siteId: string, signal: AbortSignal): Promise<Week> {
  const base = { site_id: siteId, metrics: ['visitors'], date_range: '7d' };
  const [daily, total] = await Promise.all([
    post<V2Result>('/api/v2/query', { ...base, dimensions: ['time:day'], include: { time_labels: true } }, { signal }),
    post<V2Result>('/api/v2/query', base, { signal }),
  ]);
  const byDay = new Map(daily.results.map((r) => [r.dimensions[0], metricValue(r.metrics[0])]));
  const labels = daily.meta.time_labels ?? [...byDay.keys()];
  return {
    labels,
    values: labels.map((day) => byDay.get(day) ?? 0),
    total: metricValue(total.results[0]?.metrics[0] ?? 0),
  };
}

const dayName = (iso: string) =>
  new Date(`${iso}T12:00:00Z`).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', timeZone: 'UTC' });

function SiteCard({ site }: { site: Website }) {
  const week = useData((signal) => lastWeek(site.id, signal), [site.id]);
  return (
    <li class="site-card">
      <div class="site-card-head">
        <h2>
          <Link href={`/sites/${site.id}`}>{site.name}</Link>
        </h2>
        <p class="site-domain">{site.domain}</p>
      </div>
      <div class="site-week">
        {week.error ? (
          <p class="site-week-error">
            Visitors could not be loaded.{' '}
            <button type="button" class="linklike" onClick={week.reload}>
              Try again
            </button>
          </p>
        ) : !week.data ? (
          <p class="site-week-loading" aria-hidden="true">
            …
          </p>
        ) : (
          <>
            <Sparkline values={week.data.values} labels={week.data.labels.map(dayName)} label="Visitors per day" />
            <p class="site-total">
              <strong data-testid="week-total">{compact(week.data.total)}</strong>{' '}
              {week.data.total === 1 ? 'visitor' : 'visitors'} <span class="muted">in the last 7 days</span>
            </p>
          </>
        )}
      </div>
      <p class="site-links">
        <Link href={`/sites/${site.id}`}>
          Dashboard<span class="visually-hidden"> of {site.name}</span>
        </Link>
        <Link href={`/sites/${site.id}/settings`}>
          Settings<span class="visually-hidden"> of {site.name}</span>
        </Link>
      </p>
    </li>
  );
}

export default function Sites() {
  const list = useData((signal) => get<WebsiteList>('/api/websites', { signal }), []);
  const sites = list.data?.websites ?? [];
  return (
    <Shell title="Sites">
      <div class="sites-head">
        <h1>Sites</h1>
        {sites.length > 0 && (
          <Link href="/sites/new" class="button button-primary">
            Add a site
          </Link>
        )}
      </div>
      {list.error ? (
        <ErrorNote error={list.error} retry={list.reload} />
      ) : !list.data ? (
        <Loading label="Loading your sites…" />
      ) : sites.length === 0 ? (
        <Empty title="No sites yet">
          <p>Add a site to get its tracking snippet; its visitors show up here once the snippet is on its pages.</p>
          <Link href="/sites/new" class="button button-primary">
            Add a site
          </Link>
        </Empty>
      ) : (
        <ul class="site-list">
          {sites.map((site) => (
            <SiteCard key={site.id} site={site} />
          ))}
        </ul>
      )}
    </Shell>
  );
}
