import { timezone } from '../../../../lib/accounts/schemas';
import type { ClickHouseClient } from '../../../../lib/clickhouse/client';
import { createLogger } from '../../../../lib/log';

type Zones = typeof import('../../../../lib/stats/timeZones');

/** A fresh copy of the module: adoptServerTimeZones changes module state. */
function freshZones(): Zones {
  let zones: Zones | undefined;
  jest.isolateModules(() => {
    zones = jest.requireActual<Zones>('../../../../lib/stats/timeZones');
  });
  return zones!;
}

/** Enough of a ClickHouse client for `SELECT time_zone FROM system.time_zones`. */
const fakeClickHouse = (answer: () => Promise<string[]>) =>
  ({ query: async () => ({ json: async () => (await answer()).map((z) => [z]) }) }) as unknown as ClickHouseClient;

describe('time zones', () => {
  it('spell a zone as ClickHouse does, whatever the letter case', () => {
    const { canonicalTimeZone } = freshZones();
    expect(canonicalTimeZone('utc')).toBe('UTC');
    expect(canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(canonicalTimeZone('AMERICA/NEW_YORK')).toBe('America/New_York');
    expect(canonicalTimeZone('Europe/Kyiv')).toBe('Europe/Kyiv');
    expect(canonicalTimeZone('Etc/GMT+5')).toBe('Etc/GMT+5');
  });

  it('refuse a zone only one side knows, or neither', () => {
    const { canonicalTimeZone } = freshZones();
    expect(canonicalTimeZone('US/Pacific-New')).toBeUndefined(); // the runtime maps it; ClickHouse does not know it
    expect(canonicalTimeZone('Factory')).toBeUndefined(); // ClickHouse only
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeUndefined();
    expect(canonicalTimeZone('')).toBeUndefined();
    expect(canonicalTimeZone('x'.repeat(5000))).toBeUndefined();
  });

  it('read a stored zone that is not usable as UTC, and a usable one in its canonical spelling', () => {
    const { usableTimeZone } = freshZones();
    expect(usableTimeZone('US/Pacific-New')).toBe('UTC');
    expect(usableTimeZone('not a zone')).toBe('UTC');
    expect(usableTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(usableTimeZone('Asia/Tokyo')).toBe('Asia/Tokyo');
  });

  it('the request schema stores the canonical spelling and names what is wrong', () => {
    expect(timezone.parse('europe/berlin')).toBe('Europe/Berlin');
    const refused = timezone.safeParse('US/Pacific-New');
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0].message).toMatch(/IANA time zone/);
  });

  it('narrow to the zones a ClickHouse server lists, never widen, and keep the list when it does not answer', async () => {
    const logger = createLogger('silent', 'test');
    const narrowed = freshZones();
    await narrowed.adoptServerTimeZones(
      fakeClickHouse(async () => ['UTC', 'Europe/Berlin', 'Mars/Olympus_Mons']),
      logger,
    );
    expect(narrowed.canonicalTimeZone('europe/berlin')).toBe('Europe/Berlin');
    expect(narrowed.canonicalTimeZone('Asia/Tokyo')).toBeUndefined();
    expect(narrowed.canonicalTimeZone('Mars/Olympus_Mons')).toBeUndefined();
    expect(narrowed.usableTimeZone('Asia/Tokyo')).toBe('UTC');

    const kept = freshZones();
    await kept.adoptServerTimeZones(
      fakeClickHouse(async () => Promise.reject(new Error('connect ECONNREFUSED'))),
      logger,
    );
    expect(kept.canonicalTimeZone('Asia/Tokyo')).toBe('Asia/Tokyo');
  });
});
