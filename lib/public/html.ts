// The widgets as small self-contained HTML documents for an iframe of about 300×150: inline CSS, no script, no
// external resource (the document's CSP forbids them), every value escaped. The realtime widget reloads itself
// with a meta refresh, the others less often.
import { GEO_CREDIT, type PreviewWidgetData, type RealtimeWidgetData, type RecentWidgetData } from './schemas';

/** The widget document's own policy: nothing may load but its inline styles. */
export const WIDGET_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const fmt = (n: number) => escapeHtml(n.toLocaleString('en-US'));

const STYLE = `
*{box-sizing:border-box;margin:0;padding:0}
html,body{height:100%}
body{font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2933;
background:#fff;padding:12px 14px;display:flex;flex-direction:column;overflow:hidden}
main{flex:1;min-height:0;display:flex;flex-direction:column}
h1{font-size:11px;font-weight:600;letter-spacing:.04em;text-transform:uppercase;color:#616e7c;
white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.big{font-size:40px;font-weight:700;line-height:1.1;color:#102a43;margin-top:6px;display:flex;align-items:center;gap:10px}
.dot{width:10px;height:10px;border-radius:50%;background:#27ab83;box-shadow:0 0 0 4px rgba(39,171,131,.2)}
.sub{color:#52606d;margin-top:2px}
.muted{color:#7b8794}
footer{display:flex;justify-content:space-between;gap:8px;font-size:10px;color:#9aa5b1;margin-top:6px;
white-space:nowrap;overflow:hidden}
footer a{color:#9aa5b1}
.bars{flex:1;min-height:40px;display:flex;align-items:flex-end;gap:2px;margin-top:8px;border-bottom:1px solid #e4e7eb}
.bars div{flex:1;background:#3e7bfa;border-radius:2px 2px 0 0;min-height:1px}
.bars div.now{background:#8fb3ff}
ol{list-style:none;margin-top:6px}
li{display:flex;align-items:center;gap:6px;height:17px}
li .name{flex:0 0 42%;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
li .bar{flex:1;height:6px;background:#e4e7eb;border-radius:3px;overflow:hidden}
li .bar span{display:block;height:100%;background:#3e7bfa}
li .n{flex:0 0 auto;min-width:28px;text-align:right;font-variant-numeric:tabular-nums;color:#52606d}
.note{flex:1;display:flex;align-items:center;justify-content:center;text-align:center;color:#52606d}
@media (prefers-color-scheme:dark){body{background:#1f2933;color:#e4e7eb}.big{color:#f5f7fa}.sub,li .n,.note{color:#cbd2d9}
h1{color:#9aa5b1}.bars{border-color:#3e4c59}li .bar{background:#3e4c59}}
`;

function page(title: string, body: string, refreshSeconds?: number): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${
    refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : ''
  }<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

const brand = '<span>Tidemark</span>';

function pausedBody(domain: string): string {
  return `<main><h1>${escapeHtml(domain)}</h1><p class="note">Tracking paused</p></main><footer>${brand}</footer>`;
}

export function realtimeWidget(d: RealtimeWidgetData): string {
  if (!d.active) return page(`${d.domain} · tracking paused`, pausedBody(d.domain), 60);
  const visitors = d.live_visitors === 1 ? 'visitor' : 'visitors';
  return page(
    `${d.domain} · ${d.live_visitors} live ${visitors}`,
    `<main><h1>${escapeHtml(d.domain)}</h1><p class="big"><span class="dot"></span><span>${fmt(d.live_visitors)}</span></p>` +
      `<p class="sub">${visitors} on the site now</p>` +
      `<p class="muted">${fmt(d.pageviews_last_30m)} pageviews in the last 30 minutes</p></main>` +
      `<footer>${brand}<span>updated ${escapeHtml(d.as_of.slice(11, 16))} UTC</span></footer>`,
    30,
  );
}

export function previewWidget(d: PreviewWidgetData): string {
  if (!d.active) return page(`${d.domain} · tracking paused`, pausedBody(d.domain), 300);
  const top = Math.max(1, ...d.hours.map((h) => h.pageviews));
  const bars = d.hours
    .map((h, i) => {
      const pct = Math.round((h.pageviews / top) * 100);
      const label = `${h.hour.slice(11, 16)} UTC: ${h.pageviews.toLocaleString('en-US')} pageviews`;
      return `<div${i === d.hours.length - 1 ? ' class="now"' : ''} style="height:${pct}%" title="${escapeHtml(label)}"></div>`;
    })
    .join('');
  return page(
    `${d.domain} · last 24 hours`,
    `<main><h1>${escapeHtml(d.domain)} · last 24 hours</h1>` +
      `<p class="sub"><strong>${fmt(d.totals.visitors)}</strong> visitors · <strong>${fmt(d.totals.pageviews)}</strong> pageviews</p>` +
      `<div class="bars" role="img" aria-label="Pageviews per hour over the last 24 hours">${bars}</div></main>` +
      `<footer>${brand}<span>per hour, UTC</span></footer>`,
    300,
  );
}

export function recentWidget(d: RecentWidgetData): string {
  const credit = `<a href="${GEO_CREDIT.url}" target="_blank" rel="noopener noreferrer">${escapeHtml(GEO_CREDIT.text)}</a>`;
  if (!d.active) return page(`${d.domain} · tracking paused`, pausedBody(d.domain), 300);
  const shown = d.countries.slice(0, 5);
  const top = Math.max(1, ...shown.map((c) => c.visitors));
  const rows = shown
    .map(
      (c) =>
        `<li><span class="name" title="${escapeHtml(c.country_name)}">${escapeHtml(c.country_name)}</span>` +
        `<span class="bar"><span style="width:${Math.round((c.visitors / top) * 100)}%"></span></span>` +
        `<span class="n">${fmt(c.visitors)}</span></li>`,
    )
    .join('');
  return page(
    `${d.domain} · visitors by country`,
    `<main><h1 title="${escapeHtml(d.domain)}">Top countries · last 24 hours</h1>${
      rows ? `<ol>${rows}</ol>` : '<p class="note">No visitors in the last 24 hours</p>'
    }</main><footer>${brand}${credit}</footer>`,
    300,
  );
}

/** A widget's error as a small document of its own (unknown code, too many requests, unavailable). */
export function widgetError(status: number, message: string): string {
  return page(
    `Widget unavailable (${status})`,
    `<main><p class="note">${escapeHtml(message)}</p></main><footer>${brand}</footer>`,
  );
}
