// Heatmaps: the pages with recorded clicks (all time, most clicked first); choosing one shows where on the
// page people click (a density drawing over the page's width and height) and the elements clicked most.
// The chosen page lives in the URL (?page=/pricing) so a view can be shared.
import { get, qs } from '../../lib/api';
import { compact, dateTime, relative } from '../../lib/format';
import { Link, navigate, useLocation } from '../../lib/router';
import { useData } from '../../lib/useData';
import { BarList, Panel } from '../../ui/panel';
import { Empty, ErrorNote, Loading } from '../../ui/states';
import type { SectionProps } from './section';
import { HeatmapCanvas } from './sections/heatmapCanvas';
import './sections/sections.css';
import { external, type HeatmapClicksData, type HeatmapPagesData } from './sections/types';

function PageView({ siteId, url }: { siteId: string; url: string }) {
  const clicks = useData(
    (signal) => get<HeatmapClicksData>(external(`/heatmaps/${siteId}/clicks${qs({ url })}`), { signal }),
    [siteId, url],
  );
  return (
    <div class="hm-view">
      <Panel title={`Clicks on ${url}`}>
        {clicks.error ? (
          <ErrorNote error={clicks.error} retry={clicks.reload} />
        ) : !clicks.data ? (
          <Loading label="Drawing the clicks…" />
        ) : clicks.data.total_clicks === 0 ? (
          <Empty title="No clicks on this page">Clicks on this page appear here once visitors make them.</Empty>
        ) : (
          <>
            <p class="muted small">
              {compact(clicks.data.total_clicks)} clicks, drawn over the page as most visitors saw it
              {clicks.data.page ? ` (${clicks.data.page.width} × ${clicks.data.page.height} px)` : ''}.
            </p>
            {/* Focusable so a keyboard can scroll a tall page's drawing. */}
            {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
            <section class="hm-frame" tabIndex={0} aria-label={`Click density drawing of ${url}`}>
              <HeatmapCanvas data={clicks.data} />
            </section>
            <div class="hm-legend" aria-hidden="true">
              <span>Fewer clicks</span>
              <span class="hm-scale" />
              <span>More clicks</span>
            </div>
          </>
        )}
      </Panel>
      {clicks.data && clicks.data.selectors.length > 0 && (
        <Panel title="Most clicked elements">
          <BarList
            labelHeading="Element"
            valueLabel="Clicks"
            rows={clicks.data.selectors.map((s) => ({
              key: s.selector,
              label: <code>{s.selector}</code>,
              value: s.clicks,
              display: compact(s.clicks),
            }))}
          />
        </Panel>
      )}
    </div>
  );
}

export default function Heatmaps({ site, shared }: SectionProps) {
  const loc = useLocation();
  const pages = useData(
    (signal) => get<HeatmapPagesData>(external(`/heatmaps/${site.id}/pages?limit=100`), { signal }),
    [site.id],
  );
  if (pages.error) return <ErrorNote error={pages.error} retry={pages.reload} />;
  if (!pages.data) return <Loading label="Loading heatmap pages…" />;
  const list = pages.data.pages;
  if (list.length === 0) {
    return (
      <Panel title="Heatmaps">
        <Empty title="No clicks recorded yet">
          {site.settings.heatmaps ? (
            <p>Heatmaps are on: clicks on your pages show here a few seconds after visitors make them.</p>
          ) : shared ? (
            <p>This site does not record heatmaps.</p>
          ) : (
            <p>
              Heatmaps are off for this site. Turn them on in{' '}
              <Link href={`/sites/${site.id}/settings/tracking`}>tracking settings</Link>, then clicks on your pages
              show here.
            </p>
          )}
        </Empty>
      </Panel>
    );
  }
  const wanted = loc.query.get('page');
  const chosen = list.find((p) => p.url === wanted)?.url ?? list[0].url;
  const choose = (url: string) => {
    const q = new URLSearchParams(loc.query);
    q.set('page', url);
    navigate(`${loc.path}?${q}`, { replace: true });
  };
  return (
    <div class="hm-layout">
      <Panel title="Pages by clicks">
        <ul class="hm-pages" aria-label="Pages with clicks">
          {list.map((p) => (
            <li key={p.url}>
              <button
                type="button"
                class="hm-page"
                aria-current={p.url === chosen ? 'true' : undefined}
                title={`Last click ${dateTime(p.last_updated)}`}
                onClick={() => choose(p.url)}
              >
                <span class="hm-page-url">{p.url}</span>
                <span class="hm-page-count">
                  {compact(p.total_interactions)}
                  <span class="visually-hidden"> clicks, last {relative(p.last_updated)}</span>
                </span>
              </button>
            </li>
          ))}
        </ul>
      </Panel>
      <PageView siteId={site.id} url={chosen} />
    </div>
  );
}
