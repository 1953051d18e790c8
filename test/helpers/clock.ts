// The clock, the one thing tests may fake: only Date, so network and database timers keep real time.
const REAL_TIMERS = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

/**
 * Runs `fn` with Date pinned to `now` (moved by jest.setSystemTime), or with `advance` starting there and
 * moving on in real time.
 */
export async function withDateAt<T>(now: Date | number, fn: () => Promise<T>, advance = false): Promise<T> {
  jest.useFakeTimers({ now, advanceTimers: advance, doNotFake: [...REAL_TIMERS] });
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}
