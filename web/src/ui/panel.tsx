// A dashboard panel (a titled card with optional tabs) and the bar list most panels show: label, a bar as
// wide as the row's share of the top row, and the figure. Rows with onSelect filter the dashboard.
import type { ComponentChildren } from 'preact';

export function Panel({
  title,
  tabs,
  active,
  onTab,
  children,
  actions,
}: {
  title: string;
  tabs?: { id: string; label: string }[];
  active?: string;
  onTab?: (id: string) => void;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="panel" aria-label={title}>
      <div class="panel-head">
        <h2>{title}</h2>
        {tabs && (
          <div class="tabs" role="tablist" aria-label={`${title} views`}>
            {tabs.map((t) => (
              <button
                key={t.id}
                type="button"
                role="tab"
                aria-selected={t.id === active}
                class={t.id === active ? 'tab tab-active' : 'tab'}
                onClick={() => onTab?.(t.id)}
              >
                {t.label}
              </button>
            ))}
          </div>
        )}
        {actions}
      </div>
      <div class="panel-body">{children}</div>
    </section>
  );
}

export interface BarRow {
  key: string;
  label: ComponentChildren;
  value: number;
  /** The figure as shown (defaults to the value). */
  display?: string;
  /** A second figure (conversion rate, share). */
  extra?: string;
}

export function BarList({
  rows,
  valueLabel,
  extraLabel,
  onSelect,
  labelHeading = 'Name',
}: {
  rows: BarRow[];
  valueLabel: string;
  extraLabel?: string;
  onSelect?: (row: BarRow) => void;
  labelHeading?: string;
}) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  return (
    <table class="bars">
      <thead>
        <tr>
          <th scope="col">{labelHeading}</th>
          <th scope="col" class="num">
            {valueLabel}
          </th>
          {extraLabel && (
            <th scope="col" class="num">
              {extraLabel}
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <td class="bar-cell">
              <span class="bar" style={{ width: `${(r.value / max) * 100}%` }} aria-hidden="true" />
              {onSelect ? (
                <button type="button" class="bar-label linklike" onClick={() => onSelect(r)}>
                  {r.label}
                </button>
              ) : (
                <span class="bar-label">{r.label}</span>
              )}
            </td>
            <td class="num">{r.display ?? r.value}</td>
            {extraLabel && <td class="num">{r.extra ?? ''}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
