// The custom event names a website's questions may name ("how many downloads"), read from the last 90 days
// of conversions and kept briefly per website so a burst of questions reads them once.
import type { ClickHouseClient } from '../clickhouse/client';
import { runConversions } from '../stats/conversions';

const KEEP_MS = 60_000;
const DAYS = 90;
const remembered = new Map<string, { at: number; names: string[] }>();

export async function customEventNames(
  clickhouse: ClickHouseClient,
  site: { id: string; timezone: string; currency: string },
  now = Date.now(),
): Promise<string[]> {
  const hit = remembered.get(site.id);
  if (hit && now - hit.at < KEEP_MS) return hit.names;
  const rows = await runConversions(clickhouse, {
    websiteId: site.id,
    timeZone: site.timezone,
    start: now - DAYS * 86_400_000,
    end: now,
    filters: [],
    metrics: ['events'],
    conversionFilters: [],
    dimension: 'name',
    goals: [],
    currency: site.currency,
  });
  const names = rows.filter((r) => r.key !== '').map((r) => r.key);
  if (remembered.size > 10_000) remembered.clear();
  remembered.set(site.id, { at: now, names });
  return names;
}
