// User-Agent → device type, browser and OS (DESIGN "Browser ingestion decisions": stored values come from the
// request's User-Agent, parsed with bowser). Empty strings mean "could not tell"; the caller falls back to the
// values the tracker sent.
import Bowser from 'bowser';

export type DeviceType = 'desktop' | 'mobile' | 'tablet' | '';

export interface UaResult {
  device_type: DeviceType;
  browser: string;
  browser_version: string;
  os: string;
  os_version: string;
}

// Real User-Agents are a few hundred characters; anything much longer is junk or an attempt to make parsing slow.
export const MAX_UA_LENGTH = 1024;
const CACHE_SIZE = 5_000;

const EMPTY: Readonly<UaResult> = Object.freeze({
  device_type: '',
  browser: '',
  browser_version: '',
  os: '',
  os_version: '',
});

/** Parses a User-Agent header; never throws. Results are fresh objects the caller may change. */
export function parseUserAgent(ua: string | undefined): UaResult {
  if (typeof ua !== 'string') return { ...EMPTY };
  const key = ua.length > MAX_UA_LENGTH ? ua.slice(0, MAX_UA_LENGTH) : ua;
  let result = cache.get(key);
  if (result === undefined) {
    result = parseUncached(key);
    cache.set(key, result);
  }
  return { ...result }; // a copy, so one caller's edits can't leak into the cached entry
}

/** The parse without the cache (exported for the cache benchmark and tests). */
export function parseUncached(ua: string): UaResult {
  if (ua.trim() === '') return { ...EMPTY }; // bowser throws on an empty UA
  try {
    const { browser, os, platform } = Bowser.parse(ua);
    return {
      device_type: deviceType(platform.type),
      browser: browser.name ?? '',
      browser_version: browser.version ?? '',
      os: os.name ?? '',
      // Windows reports the kernel ("NT 10.0"); the marketing version ("10") is what people recognise.
      os_version: (os.name === 'Windows' && os.versionName ? os.versionName : os.version) ?? '',
    };
  } catch {
    return { ...EMPTY };
  }
}

function deviceType(type: string | undefined): DeviceType {
  // bowser also knows 'tv' and 'bot'; neither is a device type the dashboards show.
  return type === 'desktop' || type === 'mobile' || type === 'tablet' ? type : '';
}

/** Least-recently-used cache on Map's insertion order: a hit is moved to the end, the oldest key is evicted. */
class Lru<V> {
  private readonly map = new Map<string, V>();

  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }

  get size(): number {
    return this.map.size;
  }

  clear(): void {
    this.map.clear();
  }
}

const cache = new Lru<UaResult>(CACHE_SIZE);

/** For tests and benchmarks. */
export const uaCache = {
  get size(): number {
    return cache.size;
  },
  clear(): void {
    cache.clear();
  },
};
