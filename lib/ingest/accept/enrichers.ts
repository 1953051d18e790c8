// The enrichers a web process opens once: geolocation (DB-IP Lite, ~134 MB in memory) and UA parsing.
import type { Config } from '../../config';
import { type GeoLookup, openGeo } from '../../geo/lookup';
import { parseUserAgent } from '../../ua/parse';

/** Geo and UA lookups; each optional, so a test or bench may stand one in or leave it out. */
export interface Enrichers {
  geo?: { lookup(ip: string): GeoFields | undefined };
  ua?: (userAgent: string | undefined) => UaFields;
}
export interface GeoFields {
  country_code: string;
  region: string;
  city: string;
}
export interface UaFields {
  device_type: string;
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
}

export async function openEnrichers(
  config: Pick<Config, 'GEOIP_CITY_DB_V4' | 'GEOIP_CITY_DB_V6'>,
): Promise<Enrichers & { geo: GeoLookup }> {
  const geo = await openGeo({ v4Path: config.GEOIP_CITY_DB_V4, v6Path: config.GEOIP_CITY_DB_V6 });
  return { geo, ua: parseUserAgent };
}
