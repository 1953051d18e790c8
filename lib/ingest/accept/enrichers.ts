// The enrichers a web process opens once: geolocation (DB-IP Lite, ~134 MB in memory) and UA parsing.
import type { Config } from '../config';
import { openGeo, type GeoLookup } from '../geo/lookup';
import { parseUserAgent } from '../ua/parse';
import type { Enrichers } from './pipeline';

export async function openEnrichers(config: Pick<Config, 'GEOIP_CITY_DB_V4' | 'GEOIP_CITY_DB_V6'>): Promise<Enrichers & { geo: GeoLookup }> {
  const geo = await openGeo({ v4Path: config.GEOIP_CITY_DB_V4, v6Path: config.GEOIP_CITY_DB_V6 });
  return { geo, ua: parseUserAgent };
}
