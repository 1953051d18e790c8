import { MAX_UA_LENGTH, parseUncached, parseUserAgent, type UaResult, uaCache } from '../../../../lib/ua/parse';

const CHROME_WIN =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

type Row = [label: string, ua: string, expected: Partial<UaResult>];

const table: Row[] = [
  [
    'Chrome on Windows',
    CHROME_WIN,
    { device_type: 'desktop', browser: 'Chrome', browser_version: '124.0.0.0', os: 'Windows', os_version: '10' },
  ],
  [
    'Firefox on Windows',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
    { device_type: 'desktop', browser: 'Firefox', browser_version: '125.0', os: 'Windows' },
  ],
  [
    'Safari on macOS',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
    { device_type: 'desktop', browser: 'Safari', browser_version: '17.4.1', os: 'macOS', os_version: '10.15.7' },
  ],
  [
    'Edge on Windows',
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.80',
    { device_type: 'desktop', browser: 'Microsoft Edge', os: 'Windows' },
  ],
  [
    'Chrome on Linux',
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    { device_type: 'desktop', browser: 'Chrome', os: 'Linux', os_version: '' },
  ],
  [
    'Safari on iPhone',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
    { device_type: 'mobile', browser: 'Safari', os: 'iOS', os_version: '17.4.1' },
  ],
  [
    'Chrome on iPhone',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1',
    { device_type: 'mobile', browser: 'Chrome', os: 'iOS' },
  ],
  [
    'Chrome on Android phone',
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
    { device_type: 'mobile', browser: 'Chrome', os: 'Android', os_version: '10' },
  ],
  [
    'Safari on iPad',
    'Mozilla/5.0 (iPad; CPU OS 17_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Mobile/15E148 Safari/604.1',
    { device_type: 'tablet', browser: 'Safari', os: 'iOS' },
  ],
  [
    'Chrome on Android tablet',
    'Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
    { device_type: 'tablet', browser: 'Chrome', os: 'Android' },
  ],
  [
    'Googlebot',
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    { device_type: '', browser: 'Googlebot', os: '' },
  ],
  [
    'Samsung smart TV',
    'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36',
    { device_type: '', os: 'Tizen' },
  ],
];

const EMPTY: UaResult = { device_type: '', browser: '', browser_version: '', os: '', os_version: '' };

describe('parseUserAgent', () => {
  it.each(table)('%s', (_label, ua, expected) => {
    expect(parseUserAgent(ua)).toMatchObject(expected);
  });

  it.each([undefined, '', '   ', 'garbage', 'curl/8.5.0', '\u0000\uffff'])('tells nothing from %j', (ua) => {
    expect(parseUserAgent(ua)).toEqual(EMPTY);
  });

  it('never throws on non-strings', () => {
    expect(parseUserAgent(42 as unknown as string)).toEqual(EMPTY); // as: simulating an untyped caller
  });

  it('caps the input at MAX_UA_LENGTH characters', () => {
    const long = CHROME_WIN + ' x'.repeat(5_000);
    expect(parseUserAgent(long)).toEqual(parseUncached(long.slice(0, MAX_UA_LENGTH)));
    expect(parseUserAgent('a'.repeat(100_000))).toEqual(EMPTY);
  });

  it('returns equal results from the cache, as independent copies', () => {
    uaCache.clear();
    const first = parseUserAgent(CHROME_WIN);
    expect(uaCache.size).toBe(1);
    first.browser = 'changed by a caller';
    const second = parseUserAgent(CHROME_WIN);
    expect(uaCache.size).toBe(1);
    expect(second).toEqual(parseUncached(CHROME_WIN));
    expect(second).not.toBe(first);
  });

  it('keeps the cache bounded', () => {
    uaCache.clear();
    for (let i = 0; i < 6_000; i++) parseUserAgent(`${CHROME_WIN} build/${i}`);
    expect(uaCache.size).toBe(5_000);
  });
});
