// A small line of daily figures drawn as inline SVG (no chart library on the sites list). The figures are
// also given in words to screen readers, since the line alone says nothing to them.
export function Sparkline({
  values,
  labels,
  label,
  width = 120,
  height = 32,
}: {
  values: number[];
  /** One per value (dates), for the spoken description. */
  labels?: string[];
  /** What the values are ("Visitors per day"). */
  label: string;
  width?: number;
  height?: number;
}) {
  const max = Math.max(1, ...values);
  const pad = 2;
  const step = values.length > 1 ? (width - pad * 2) / (values.length - 1) : 0;
  const points = values.map((v, i) => [pad + i * step, height - pad - (v / max) * (height - pad * 2)] as const);
  const line = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  const area = points.length
    ? `${pad},${height - pad} ${line} ${(pad + (points.length - 1) * step).toFixed(1)},${height - pad}`
    : '';
  const spoken = values.map((v, i) => (labels?.[i] ? `${labels[i]}: ${v}` : String(v))).join(', ');
  return (
    <svg
      class="sparkline"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      preserveAspectRatio="none"
      role="img"
      aria-label={`${label}: ${spoken || 'no data'}`}
    >
      {points.length > 1 && <polygon class="sparkline-area" points={area} />}
      {points.length > 1 && <polyline class="sparkline-line" points={line} />}
      {points.length === 1 && <circle class="sparkline-line" cx={points[0][0]} cy={points[0][1]} r="2" />}
    </svg>
  );
}
