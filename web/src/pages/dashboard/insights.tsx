// Insights: the website's feed of anomalies in words, week-over-week trends, recommendations and this month's
// forecasts (docs/intelligence.md "Insights"), read from the External API with the dashboard's JWT. Filters by
// type (tabs), severity and range; newest first, more on demand.
import { useState } from 'preact/hooks';
import type { Insight, InsightsData, InsightType, Severity } from '../../../../lib/insights/schemas';
import { get, qs } from '../../lib/api';
import { dateTime, relative } from '../../lib/format';
import { useData } from '../../lib/useData';
import { Choice } from '../../ui/form';
import { Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import './sections/sections.css';
import './sections/insights.css';
import { external } from './sections/types';

const TYPES: { id: InsightType | 'all'; label: string }[] = [
  { id: 'all', label: 'All' },
  { id: 'anomaly', label: 'Anomalies' },
  { id: 'trend', label: 'Trends' },
  { id: 'recommendation', label: 'Recommendations' },
  { id: 'prediction', label: 'Forecasts' },
];
const TYPE_LABEL: Record<InsightType, string> = {
  anomaly: 'Anomaly',
  trend: 'Trend',
  recommendation: 'Recommendation',
  prediction: 'Forecast',
};
const SEVERITIES: { id: Severity | 'all'; label: string }[] = [
  { id: 'all', label: 'Any severity' },
  { id: 'critical', label: 'Critical' },
  { id: 'warning', label: 'Warning' },
  { id: 'info', label: 'Info' },
];
const RANGES = [
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: '90d', label: 'Last 90 days' },
];
const PAGE = 50;

function InsightCard({ insight }: { insight: Insight }) {
  return (
    <article class={`insight insight-${insight.severity}`} aria-labelledby={`insight-${insight.id}`}>
      <div class="insight-meta">
        <span class="insight-type">{TYPE_LABEL[insight.type]}</span>
        <span class={`insight-badge insight-badge-${insight.severity}`}>{insight.severity}</span>
        <time class="muted small" dateTime={insight.created_at} title={dateTime(insight.created_at)}>
          {relative(insight.created_at)}
        </time>
      </div>
      <h3 id={`insight-${insight.id}`} class="insight-title">
        {insight.title}
      </h3>
      <p class="insight-description">{insight.description}</p>
      <p class="insight-advice">
        <strong>What to do: </strong>
        {insight.recommendation}
      </p>
    </article>
  );
}

export default function Insights({ site }: SectionProps) {
  const [type, setType] = useState<InsightType | 'all'>('all');
  const [severity, setSeverity] = useState<Severity | 'all'>('all');
  const [range, setRange] = useState('7d');
  const [pages, setPages] = useState(1);
  const feed = useData(
    (signal) =>
      get<InsightsData>(
        external(
          `/insights/${site.id}${qs({
            range,
            limit: Math.min(200, PAGE * pages),
            type: type === 'all' ? undefined : type,
            severity: severity === 'all' ? undefined : severity,
          })}`,
        ),
        { signal },
      ),
    [site.id, type, severity, range, pages],
  );
  const insights = feed.data?.insights ?? [];
  const filtered = type !== 'all' || severity !== 'all';
  return (
    <div class="sections">
      <Panel
        title="Insights"
        tabs={TYPES}
        active={type}
        onTab={(id) => {
          setPages(1);
          setType(id as InsightType | 'all');
        }}
      >
        <div class="insight-filters">
          <Choice
            label="Severity"
            value={severity}
            options={SEVERITIES}
            onChange={(v) => {
              setPages(1);
              setSeverity(v);
            }}
          />
          <Choice
            label="Period"
            value={range}
            options={RANGES}
            onChange={(v) => {
              setPages(1);
              setRange(v);
            }}
          />
          {feed.data && (
            <span class="muted small">
              {feed.data.pagination.total} {feed.data.pagination.total === 1 ? 'insight' : 'insights'}
            </span>
          )}
        </div>
        {feed.error ? (
          <ErrorNote error={feed.error} retry={feed.reload} />
        ) : !feed.data ? (
          <Loading label="Loading insights…" />
        ) : insights.length === 0 ? (
          <Empty title={filtered ? 'No insights match these filters' : 'No insights yet'}>
            {filtered
              ? 'Try another type, severity or a longer period.'
              : 'Every night Tidemark looks at the last two weeks for significant trends, pages that need attention and this month’s forecast; anomalies appear here within the hour. A new site needs about a week of visits.'}
          </Empty>
        ) : (
          <>
            <div class="insight-feed" aria-busy={feed.loading}>
              {insights.map((i) => (
                <InsightCard key={i.id} insight={i} />
              ))}
            </div>
            {feed.data.pagination.has_more && PAGE * pages < 200 && (
              <button type="button" class="button button-small" onClick={() => setPages(pages + 1)}>
                Show more
              </button>
            )}
          </>
        )}
      </Panel>
    </div>
  );
}
