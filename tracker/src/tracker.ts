// Tidemark browser tracker. One tag: <script defer data-site="CODE" src="https://HOST/tracker.js"></script>
// Sends pageviews (SPA navigation included), engagement time and scroll depth, custom events
// (window.tidemark), outbound-link and download clicks, heatmap clicks, JavaScript errors, and loads the
// session-replay bundle only when the website enables it. Every byte counts here: the core must stay
// under 2 KB gzipped, so this file favours short code over abstractions.
declare const REPLAY_FILE: string;

interface Settings {
  track_outbound_links?: boolean;
  track_downloads?: boolean;
  session_replay?: boolean;
  heatmaps?: boolean;
}
type Extra = Record<string, unknown>;
type Tm = ((name: string, props?: Extra) => void) & { q?: IArguments[]; optOut?: () => void; optIn?: () => void };

((w, d, nav, loc) => {
  const script = d.currentScript as HTMLScriptElement | null;
  if (!script) return;
  const data = script.dataset;
  const api = data.api || new URL(script.src).origin;
  const endpoint = `${api}/api/events/${data.site}`;
  const blocked =
    data.allowLocalhost == null && (/^(localhost|127\.|\[::1\])/.test(loc.hostname) || loc.protocol == 'file:');
  const IGNORE = 'tidemark_ignore';
  // Storage may be missing or throw (blocked cookies); then it behaves as empty. `session` picks sessionStorage.
  const ls = (k: string, v?: string | null, session?: 1): string | null | undefined => {
    try {
      const s = session ? sessionStorage : localStorage;
      if (v === undefined) return s.getItem(k);
      v === null ? s.removeItem(k) : s.setItem(k, v);
    } catch {
      // storage disabled
    }
  };
  // randomUUID exists only in secure contexts; plain-http pages get a random id of the same shape.
  const rid = (): string =>
    crypto.randomUUID
      ? crypto.randomUUID()
      : '10000000-1000-4000-8000-100000000000'.replace(/[018]/g, (c) =>
          (+c ^ (crypto.getRandomValues(new Uint8Array(1))[0] & (15 >> (+c / 4)))).toString(16),
        );
  const visitor = data.persist == 'true' ? (ls('tm_vid') as string) || rid() : undefined;
  if (visitor) ls('tm_vid', visitor);

  // A session ends after 30 minutes without activity.
  const session = () => {
    const now = Date.now();
    let id = ls('tm_sid', undefined, 1) as string;
    if (!id || now - Number(ls('tm_at', undefined, 1)) > 18e5) ls('tm_sid', (id = rid()), 1);
    ls('tm_at', String(now), 1);
    return id;
  };

  let referrer = d.referrer;
  // text/plain keeps the request "simple": no CORS preflight before each event.
  const send = (type: string, extra: Extra, beacon?: boolean) => {
    if (blocked || ls(IGNORE) == 'true') return;
    const width = w.innerWidth;
    const body = JSON.stringify({
      event_type: type,
      session_id: session(),
      visitor_id: visitor,
      url: loc.href,
      referrer: referrer || undefined,
      device_type: width < 768 ? 'mobile' : width < 1024 ? 'tablet' : 'desktop',
      browser: '',
      os: '',
      user_agent: nav.userAgent,
      screen_width: screen.width,
      screen_height: screen.height,
      language: nav.language,
      ...extra,
    });
    if (!(beacon && nav.sendBeacon?.(endpoint, body))) {
      fetch(endpoint, {
        method: 'POST',
        body,
        keepalive: body.length < 6e4,
        headers: { 'Content-Type': 'text/plain' },
      }).catch(() => 0);
    }
  };

  const tm: Tm = (name, props) => send('custom', { event_name: name, props: props && (props.props || props) });
  tm.optOut = () => ls(IGNORE, 'true');
  tm.optIn = () => ls(IGNORE, null);
  const queued = (w as unknown as { tidemark?: Tm }).tidemark?.q || [];
  (w as unknown as { tidemark: Tm }).tidemark = tm;

  // Engagement: visible time and deepest scroll of the current page, sent when it is left or hidden.
  let page = '';
  let engaged = 0;
  let since = d.hidden ? 0 : Date.now();
  let depth = 0;
  const leave = () => {
    if (since) engaged += Date.now() - since;
    since = d.hidden ? 0 : Date.now();
    if (page && engaged > 0) send('engagement', { engagement_ms: engaged, scroll_depth: depth }, true);
    engaged = depth = 0;
  };
  const pageview = () => {
    const path = loc.pathname + loc.search;
    if (path == page) return;
    if (page) {
      leave();
      referrer = page;
    }
    page = path;
    send('pageview', {});
  };
  for (const k of ['pushState', 'replaceState'] as const) {
    const orig = history[k];
    history[k] = function (this: History, ...a: Parameters<History['pushState']>) {
      orig.apply(this, a);
      pageview();
    };
  }
  const on = (t: EventTarget, type: string, f: (e: never) => void) =>
    t.addEventListener(type, f as EventListener, true);
  on(w, 'popstate', pageview);
  on(d, 'visibilitychange', () => (d.hidden ? leave() : (since = Date.now())));
  on(w, 'pagehide', leave);
  on(w, 'scroll', () => {
    const el = d.documentElement;
    depth = Math.max(depth, Math.min(100, Math.round(((w.scrollY + w.innerHeight) / el.scrollHeight) * 100)));
  });
  // Resource-load failures also reach a capturing 'error' listener; only script errors carry a message.
  on(
    w,
    'error',
    (e: ErrorEvent) =>
      e.message && send('error', { message: e.message, error_type: e.error?.name, stack: e.error?.stack }),
  );
  on(w, 'unhandledrejection', (e: PromiseRejectionEvent) =>
    send('error', {
      message: String(e.reason?.message || e.reason),
      error_type: e.reason?.name || 'UnhandledRejection',
      stack: e.reason?.stack,
    }),
  );

  fetch(`${endpoint}/config`)
    .then((r) => r.json())
    .then(({ data: { settings: s } }: { data: { settings: Settings } }) => {
      on(d, 'click', (e: MouseEvent) => {
        const t = e.target as Element;
        const a = t.closest && (t.closest('a[href]') as HTMLAnchorElement | null);
        if (a) {
          const u = new URL(a.href, loc.href);
          if (
            s.track_downloads &&
            /\.(pdf|zip|dmg|exe|msi|apk|docx?|xlsx?|pptx?|csv|txt|mp[34]|gz|rar|7z)$/i.test(u.pathname)
          ) {
            send('custom', { event_name: 'File Download', props: { url: u.href } }, true);
          } else if (s.track_outbound_links && u.host != loc.host && /^http/.test(u.protocol)) {
            send('custom', { event_name: 'Outbound Link: Click', props: { url: u.href } }, true);
          }
        }
        if (s.heatmaps) {
          let sel = '';
          for (let n: Element | null = t, i = 0; n && n.tagName != 'HTML' && i < 4; n = n.parentElement, i++) {
            sel =
              n.tagName.toLowerCase() +
              (n.id ? `#${n.id}` : n.classList[0] ? `.${n.classList[0]}` : '') +
              (sel && `>${sel}`);
            if (n.id) break;
          }
          send('click', {
            x: Math.round(e.pageX),
            y: Math.round(e.pageY),
            viewport_width: w.innerWidth,
            viewport_height: w.innerHeight,
            page_height: d.documentElement.scrollHeight,
            selector: sel,
          });
        }
      });
      if (s.session_replay)
        import(`${api}/tracker/${REPLAY_FILE}`).then((m: { start: (f: typeof send) => void }) => m.start(send));
    })
    .catch(() => 0);

  pageview();
  for (const args of queued) tm.apply(null, args as unknown as Parameters<Tm>);
})(window, document, navigator, location);
