import { previewWidget, realtimeWidget, recentWidget, widgetError } from '../../../../lib/public/html';

const AS_OF = '2026-11-25T07:00:00.000Z';
const HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>&';

describe('widget documents', () => {
  it('escape every value they show', () => {
    const docs = [
      realtimeWidget({ active: true, domain: HOSTILE, live_visitors: 2, pageviews_last_30m: 9, as_of: AS_OF }),
      previewWidget({
        active: true,
        domain: HOSTILE,
        hours: [{ hour: AS_OF, visitors: 1, pageviews: 2 }],
        totals: { visitors: 1, pageviews: 2 },
        as_of: AS_OF,
      }),
      recentWidget({
        active: true,
        domain: HOSTILE,
        period: 'last_24h',
        countries: [{ country_code: 'XX', country_name: HOSTILE, visitors: 1 }],
        attribution: { text: 'IP Geolocation by DB-IP', url: 'https://db-ip.com' },
        as_of: AS_OF,
      }),
      realtimeWidget({ active: false, domain: HOSTILE, message: 'Tracking is paused for this website' }),
      widgetError(404, HOSTILE),
    ];
    for (const doc of docs) {
      expect(doc).not.toContain('<script');
      expect(doc).not.toContain('<img');
      expect(doc).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(doc).toContain('&quot;&gt;');
      expect(doc).toMatch(/^<!doctype html>/);
    }
  });

  it('scale the timeline to its busiest hour and show an empty country list as such', () => {
    const doc = previewWidget({
      active: true,
      domain: 'a.example',
      hours: [
        { hour: AS_OF, visitors: 1, pageviews: 4 },
        { hour: AS_OF, visitors: 1, pageviews: 1 },
      ],
      totals: { visitors: 2, pageviews: 5 },
      as_of: AS_OF,
    });
    expect(doc).toContain('height:100%');
    expect(doc).toContain('height:25%');
    const empty = recentWidget({
      active: true,
      domain: 'a.example',
      period: 'last_24h',
      countries: [],
      attribution: { text: 'IP Geolocation by DB-IP', url: 'https://db-ip.com' },
      as_of: AS_OF,
    });
    expect(empty).toContain('No visitors in the last 24 hours');
    expect(empty).toContain('IP Geolocation by DB-IP');
  });
});
