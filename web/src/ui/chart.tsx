// A line chart over time buckets, drawn by uPlot (canvas, fast on thousands of points; its CSS comes in with
// pages/dashboard/dashboard.css). The x axis is the bucket index, so a previous period of equal length lines
// up with the current one; markers (annotations) and bands (anomalies) sit over the plot as list items a
// screen reader reads.
// Only the dashboard imports this file, so uPlot stays out of the first load.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** The comparison period: dashed, muted. */
  dashed?: boolean;
}

export interface ChartMarker {
  /** The bucket the marker sits on. */
  index: number;
  /** What a reader hears and sees on hover. */
  label: string;
}

export interface ChartBand {
  /** The first and last buckets it covers. */
  from: number;
  to: number;
  /** Colours the band: info, warning or critical. */
  tone: string;
  /** What a reader hears and sees on hover. */
  label: string;
}

interface Props {
  /** The x axis' bucket labels, one per value. */
  labels: string[];
  series: ChartSeries[];
  markers?: ChartMarker[];
  bands?: ChartBand[];
  /** How a label reads on the axis and in the legend. */
  formatLabel(label: string): string;
  formatValue(value: number): string;
  /** A sentence describing the chart for screen readers. */
  summary: string;
  height?: number;
}

const cssVar = (name: string, fallback: string) =>
  getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;

/** The theme's colours, read when the chart is built (and rebuilt when the system theme changes). */
function colours() {
  return {
    line: cssVar('--accent', '#2456c9'),
    previous: cssVar('--muted', '#5b6573'),
    grid: cssVar('--border', '#dde1e7'),
    text: cssVar('--muted', '#5b6573'),
  };
}

function useDarkMode(): boolean {
  const query = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
  const [dark, setDark] = useState(query?.matches ?? false);
  useEffect(() => {
    if (!query) return;
    const update = () => setDark(query.matches);
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return dark;
}

export function LineChart({
  labels,
  series,
  markers = [],
  bands = [],
  formatLabel,
  formatValue,
  summary,
  height = 260,
}: Props) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const dark = useDarkMode();
  // Bumped when the plot is drawn at a new size, so the markers move with it.
  const [drawn, setDrawn] = useState(0);

  useLayoutEffect(() => {
    const el = host.current;
    if (!el) return;
    const c = colours();
    const n = labels.length;
    const axis = {
      stroke: c.text,
      grid: { stroke: c.grid, width: 1 },
      ticks: { stroke: c.grid, width: 1 },
      font: '12px system-ui, sans-serif',
    };
    const options: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      scales: {
        x: { time: false, range: () => [0, Math.max(1, n - 1)] },
        // From zero, and a few units tall when there is little or nothing (not 0 to 100 for an empty week).
        y: { range: (_u, _min, max) => uPlot.rangeNum(0, Math.max(max ?? 0, 4), 0.1, true) },
      },
      cursor: { points: { size: 7 }, drag: { x: false, y: false } },
      legend: { show: true, live: true },
      series: [
        // The legend reads "Nov 20 ■ Visitors 3" (the x label is hidden by CSS); at rest it names the span.
        {
          label: 'Time',
          value: (_u, v) =>
            v === null || labels[v] === undefined
              ? n
                ? `${formatLabel(labels[0])} – ${formatLabel(labels[n - 1])}`
                : ''
              : formatLabel(labels[v]),
        },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.dashed ? c.previous : c.line,
          width: 2,
          dash: s.dashed ? [6, 4] : undefined,
          fill: s.dashed ? undefined : `${c.line}22`,
          // Dots on each bucket only while they stay apart.
          points: { show: (u: uPlot) => u.bbox.width / devicePixelRatio / Math.max(1, n) >= 14 },
          value: (_u: uPlot, v: number | null) => (v === null ? '' : formatValue(v)),
        })),
      ],
      axes: [
        {
          ...axis,
          // Whole buckets only, as many as fit (about one label per 70 px).
          splits: (u) => {
            const fit = Math.max(2, Math.floor(u.bbox.width / devicePixelRatio / 70));
            const step = Math.max(1, Math.ceil(n / fit));
            const out: number[] = [];
            for (let i = 0; i < n; i += step) out.push(i);
            return out;
          },
          values: (_u, splits) => splits.map((i) => (labels[i] === undefined ? '' : formatLabel(labels[i]))),
        },
        {
          ...axis,
          size: 50,
          // Counts: whole steps only.
          incrs: [
            1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6,
            5e6, 1e7, 1e8, 1e9,
          ],
          values: (_u, splits) => splits.map((v) => formatValue(v)),
        },
      ],
      hooks: { draw: [() => setDrawn((d) => d + 1)] },
    };
    const data: uPlot.AlignedData = [labels.map((_, i) => i), ...series.map((s) => s.values)];
    const u = new uPlot(options, data, el);
    plot.current = u;
    const resize = new ResizeObserver(() => {
      const width = Math.max(200, el.clientWidth);
      if (width !== u.width) u.setSize({ width, height });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [labels, series, height, dark]);

  const u = plot.current;
  const figure = useRef<HTMLElement>(null);
  // The plot area's place inside the figure (the legend and axes move it).
  const over = u?.over.getBoundingClientRect();
  const frame = figure.current?.getBoundingClientRect();
  return (
    <figure class="chart" ref={figure} data-series={series.length} data-points={labels.length}>
      <figcaption class="visually-hidden">{summary}</figcaption>
      <div class="chart-host" ref={host} />
      {u && over && frame && drawn > 0 && bands.length > 0 && (
        <ul class="chart-bands" aria-label="Anomalies">
          {bands.map((b) => {
            // Half a bucket either side, so a one-bucket anomaly is a visible stripe; clipped to the plot.
            const x = (i: number) => Math.min(Math.max(u.valToPos(i, 'x'), 0), over.width);
            const left = x(b.from - 0.5);
            return (
              <li
                key={`${b.from}-${b.to}-${b.label}`}
                class={`chart-band is-${b.tone}`}
                data-tone={b.tone}
                style={{
                  left: `${over.left - frame.left + left}px`,
                  width: `${Math.max(3, x(b.to + 0.5) - left)}px`,
                  top: `${over.top - frame.top}px`,
                  height: `${over.height}px`,
                }}
              >
                <span class="chart-band-tab" title={b.label} />
                <span class="visually-hidden">{b.label}</span>
              </li>
            );
          })}
        </ul>
      )}
      {u && over && frame && drawn > 0 && markers.length > 0 && (
        <ul class="chart-markers" aria-label="Annotations">
          {markers.map((m) => (
            <li
              key={`${m.index}-${m.label}`}
              class="chart-marker"
              title={m.label}
              style={{
                left: `${over.left - frame.left + u.valToPos(m.index, 'x')}px`,
                top: `${over.top - frame.top}px`,
                height: `${over.height}px`,
              }}
            >
              <span class="visually-hidden">{m.label}</span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
