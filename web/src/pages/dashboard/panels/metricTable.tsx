// A bar list with several figures per row (goals: visitors, completions, rate; revenue: total, average):
// BarList's look, one numeric column per metric. A row with onSelect is a button (filter, drill down).
import type { ComponentChildren } from 'preact';
import './conversions.css';

interface MetricRow {
  key: string;
  label: ComponentChildren;
  /** The bar's length relative to the longest row's. */
  bar: number;
  cells: string[];
}

export function MetricTable({
  rows,
  columns,
  labelHeading,
  caption,
  onSelect,
  wide,
}: {
  rows: MetricRow[];
  columns: string[];
  labelHeading: string;
  /** Read by screen readers: what the table lists and what choosing a row does. */
  caption: string;
  onSelect?: (row: MetricRow) => void;
  /** Wider figure columns (money). */
  wide?: boolean;
}) {
  const max = Math.max(1, ...rows.map((r) => r.bar));
  return (
    <table class={wide ? 'bars cv-table cv-table-wide' : 'bars cv-table'}>
      <caption class="cv-hidden">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{labelHeading}</th>
          {columns.map((c) => (
            <th key={c} scope="col" class="num">
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <td class="bar-cell">
              <span class="bar" style={{ width: `${(Math.max(0, r.bar) / max) * 100}%` }} aria-hidden="true" />
              {onSelect ? (
                <button type="button" class="bar-label linklike" onClick={() => onSelect(r)}>
                  {r.label}
                </button>
              ) : (
                <span class="bar-label">{r.label}</span>
              )}
            </td>
            {r.cells.map((c, i) => (
              <td key={columns[i]} class="num">
                {c}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
