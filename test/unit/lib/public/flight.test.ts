import { FlightCache } from '../../../../lib/public/flight';

describe('FlightCache', () => {
  it('runs one load for concurrent callers and serves it until it is ttl old', async () => {
    const cache = new FlightCache<number>(1_000);
    let loads = 0;
    let release: (n: number) => void = () => undefined;
    const load = () => {
      loads++;
      return new Promise<number>((resolve) => {
        release = resolve;
      });
    };
    const waiting = Array.from({ length: 100 }, () => cache.get('site', load, 10_000));
    release(7);
    expect(await Promise.all(waiting)).toEqual(Array(100).fill(7));
    expect(loads).toBe(1);
    expect(await cache.get('site', async () => 8, 10_999)).toBe(7);
    expect(await cache.get('site', async () => 8, 11_000)).toBe(8);
    expect(await cache.get('other', async () => 9, 11_000)).toBe(9);
  });

  it('keeps no failed load: the next caller tries again', async () => {
    const cache = new FlightCache<number>(1_000);
    await expect(cache.get('site', async () => Promise.reject(new Error('down')), 0)).rejects.toThrow('down');
    expect(await cache.get('site', async () => 3, 1)).toBe(3);
  });

  it('starts over past its entry cap', async () => {
    const cache = new FlightCache<number>(1_000, 2);
    await cache.get('a', async () => 1, 0);
    await cache.get('b', async () => 2, 0);
    await cache.get('c', async () => 3, 0);
    expect(await cache.get('a', async () => 10, 1)).toBe(10);
    expect(await cache.get('c', async () => 30, 1)).toBe(3);
  });
});
