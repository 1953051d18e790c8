// Realtime: who is on the site now (visitors seen in the last 5 minutes), pageviews minute by minute over the
// last 30 minutes, and the pages and countries of the live visitors. Polls every 5 s while the tab is
// visible, from the same presence data /track/realtime serves to scripts.
import { get } from '../../lib/api';
import { compact } from '../../lib/format';
import { BarList, Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import { countryName } from './sections/places';
import { usePoll } from './sections/poll';
import './sections/sections.css';
import { external, type RealtimeData } from './sections/types';

const POLL_MS = 5_000;

const clock = (ms: number) => new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

function MinuteBars({ minutes }: { minutes: RealtimeData['pageviews_per_minute'] }) {
  const busiest = Math.max(0, ...minutes.map((m) => m.pageviews));
  const max = Math.max(1, busiest);
  const total = minutes.reduce((s, m) => s + m.pageviews, 0);
  const width = 10;
  return (
    <figure class="rt-chart">
      <svg
        viewBox={`0 0 ${minutes.length * width} 100`}
        preserveAspectRatio="none"
        role="img"
        aria-label={`Pageviews per minute over the last 30 minutes, ${total} in all; the busiest minute had ${busiest}.`}
      >
        <line class="rt-axis" x1="0" y1="99.5" x2={minutes.length * width} y2="99.5" />
        {minutes.map((m, i) => {
          const h = m.pageviews === 0 ? 0 : Math.max(3, (m.pageviews / max) * 96);
          return (
            <rect key={m.minute} class="rt-bar" x={i * width + 1.5} y={100 - h} width={width - 3} height={h}>
              <title>{`${clock(Date.parse(m.minute))}: ${m.pageviews} pageview${m.pageviews === 1 ? '' : 's'}`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption class="rt-chart-axis">
        <span>30 min ago</span>
        <span>now</span>
      </figcaption>
    </figure>
  );
}

export default function Realtime({ site }: SectionProps) {
  const live = usePoll((signal) => get<RealtimeData>(external(`/track/realtime/${site.id}`), { signal }), POLL_MS, [
    site.id,
  ]);
  if (!live.data) {
    return live.error ? <ErrorNote error={live.error} /> : <Loading label="Loading live visitors…" />;
  }
  const d = live.data;
  return (
    <div class="sections">
      <div class="rt-head">
        <section class="panel rt-live" aria-labelledby="rt-live-label">
          <p class="rt-number" data-testid="live-visitors">
            <span class="rt-pulse" aria-hidden="true" />
            {compact(d.live_visitors)}
          </p>
          <h2 id="rt-live-label" class="rt-live-label">
            {d.live_visitors === 1 ? 'visitor' : 'visitors'} on the site now
          </h2>
          <p class="muted small">Seen in the last 5 minutes · updates every 5 seconds</p>
          <p class="muted small" data-testid="pageviews-30m">
            {compact(d.pageviews_last_30m)} pageviews in the last 30 minutes
          </p>
        </section>
        <Panel title="Pageviews, last 30 minutes">
          <MinuteBars minutes={d.pageviews_per_minute} />
        </Panel>
      </div>
      {live.error && (
        <p class="muted small" role="status">
          Could not refresh ({live.error.message}); showing the figures of {clock(live.updatedAt ?? Date.now())}.
          Retrying every 5 seconds.
        </p>
      )}
      <div class="section-grid">
        <Panel title="Top pages now">
          {d.top_pages.length === 0 ? (
            <Empty title="Nobody is on a page right now">Live visitors' pages show here as they browse.</Empty>
          ) : (
            <BarList
              labelHeading="Page"
              valueLabel="Visitors"
              rows={d.top_pages.map((p) => ({
                key: p.url,
                label: p.url,
                value: p.visitors,
                display: compact(p.visitors),
              }))}
            />
          )}
        </Panel>
        <Panel title="Countries now">
          {d.countries.length === 0 ? (
            <Empty title="No live visitors' countries">
              Countries appear when visitors with a known location arrive.
            </Empty>
          ) : (
            <BarList
              labelHeading="Country"
              valueLabel="Visitors"
              rows={d.countries.map((c) => ({
                key: c.country_code,
                label: countryName(c.country_code),
                value: c.visitors,
                display: compact(c.visitors),
              }))}
            />
          )}
        </Panel>
      </div>
    </div>
  );
}
