// A page's click density drawn on a canvas: each grid cell's clicks as a soft spot whose strength is its share
// of the busiest cell, accumulated in an alpha layer and then coloured blue (few) → red (many), the usual
// heatmap rendering. The canvas keeps the page's median width:height, so spots sit where the clicks were.
import { useEffect, useRef } from 'preact/hooks';
import type { HeatmapClicksData } from './types';

const STOPS: [number, string][] = [
  [0.15, '#2b50ff'],
  [0.35, '#00d5ff'],
  [0.55, '#4dff5e'],
  [0.75, '#ffe600'],
  [1, '#ff2a00'],
];

let palette: Uint8ClampedArray | null = null;
/** 256 RGBA colours along the gradient, indexed by accumulated alpha. */
function colours(): Uint8ClampedArray {
  if (palette) return palette;
  const c = document.createElement('canvas');
  c.width = 256;
  c.height = 1;
  const g = c.getContext('2d')!;
  const grad = g.createLinearGradient(0, 0, 256, 0);
  for (const [at, colour] of STOPS) grad.addColorStop(at, colour);
  g.fillStyle = grad;
  g.fillRect(0, 0, 256, 1);
  palette = g.getImageData(0, 0, 256, 1).data;
  return palette;
}

/** The canvas height for a page of `page` size drawn `width` wide (tall pages are capped at 6 widths). */
function heightFor(width: number, page: HeatmapClicksData['page']): number {
  const ratio = page && page.width > 0 ? page.height / page.width : 1.5;
  return Math.round(width * Math.min(6, Math.max(0.5, ratio)));
}

export function HeatmapCanvas({ data }: { data: HeatmapClicksData }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const draw = () => {
      const cssWidth = canvas.parentElement?.clientWidth || 600;
      const scale = Math.min(2, window.devicePixelRatio || 1);
      const w = Math.round(cssWidth * scale);
      const h = Math.round(heightFor(cssWidth, data.page) * scale);
      canvas.width = w;
      canvas.height = h;
      const ctx = canvas.getContext('2d');
      if (!ctx) return;
      ctx.clearRect(0, 0, w, h);
      const max = Math.max(1, ...data.points.map((p) => p.clicks));
      const radius = Math.max(10, Math.round(w / 40));
      // Busiest cells last, so the strongest spots are drawn on top of the faint ones.
      for (const p of [...data.points].reverse()) {
        const x = p.x * w;
        const y = p.y * h;
        const g = ctx.createRadialGradient(x, y, 0, x, y, radius);
        const strength = 0.25 + 0.75 * (p.clicks / max);
        g.addColorStop(0, `rgba(0,0,0,${strength})`);
        g.addColorStop(1, 'rgba(0,0,0,0)');
        ctx.fillStyle = g;
        ctx.fillRect(x - radius, y - radius, radius * 2, radius * 2);
      }
      const image = ctx.getImageData(0, 0, w, h);
      const px = image.data;
      const pal = colours();
      for (let i = 3; i < px.length; i += 4) {
        const a = px[i];
        if (!a) continue;
        const o = a * 4;
        px[i - 3] = pal[o];
        px[i - 2] = pal[o + 1];
        px[i - 1] = pal[o + 2];
        px[i] = Math.min(235, 60 + a);
      }
      ctx.putImageData(image, 0, 0);
    };
    draw();
    let last = canvas.parentElement?.clientWidth;
    const observer = new ResizeObserver(() => {
      const now = canvas.parentElement?.clientWidth;
      if (now !== last) {
        last = now;
        draw();
      }
    });
    if (canvas.parentElement) observer.observe(canvas.parentElement);
    return () => observer.disconnect();
  }, [data]);
  const busiest = data.points[0];
  const where = busiest
    ? `the busiest spot is ${Math.round(busiest.x * 100)}% across and ${Math.round(busiest.y * 100)}% down the page`
    : 'no clicks yet';
  return (
    <canvas
      ref={ref}
      data-testid="heatmap-canvas"
      role="img"
      aria-label={`Click density of ${data.url}: ${data.total_clicks} clicks; ${where}.`}
    />
  );
}
