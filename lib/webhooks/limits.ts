// Per-webhook caps (docs/webhooks.md "One slow receiver"): at most `concurrency` attempts in flight and
// `perSecond` started per second for one webhook, across every worker process. A slot is a member of a sorted
// set scored by its expiry, so a worker that dies holding one frees it after the attempt's timeout; the rate
// is a counter per second. Both are taken in one script, or neither.
import type { Redis } from '../redis';
import { redisKey } from '../redis';

// KEYS: slots, rate. ARGV: now ms, slot ttl ms, slot token, concurrency, per second.
// Answers 1 when taken, 0 when the webhook is at its concurrency, -1 when at its rate.
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[5]) then return -1 end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], 2000)
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1`;

interface LimitCommands {
  tidemarkWebhookTake(slots: string, rate: string, ...args: string[]): Promise<number>;
}
const defined = new WeakSet<Redis>();
// Sent once and run by its hash (EVALSHA): at hundreds of attempts a second the script's text would be most of
// what the connection writes.
function commands(redis: Redis): LimitCommands {
  if (!defined.has(redis)) {
    redis.defineCommand('tidemarkWebhookTake', { numberOfKeys: 2, lua: TAKE });
    defined.add(redis);
  }
  return redis as unknown as LimitCommands;
}

export interface WebhookCaps {
  concurrency: number;
  perSecond: number;
}

export class WebhookLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly caps: WebhookCaps,
    /** How long a slot may be held: longer than one attempt can take. */
    private readonly slotTtlMs: number,
  ) {}

  private keys(webhookId: string, now: number): [string, string] {
    return [
      redisKey(this.prefix, 'webhook', webhookId, 'slots'),
      redisKey(this.prefix, 'webhook', webhookId, 'rate', String(Math.floor(now / 1000))),
    ];
  }

  /** Takes a slot for `token`; false when the webhook is at one of its caps (the job waits and tries again). */
  async take(webhookId: string, token: string): Promise<boolean> {
    const now = Date.now();
    const taken = await commands(this.redis).tidemarkWebhookTake(
      ...this.keys(webhookId, now),
      String(now),
      String(this.slotTtlMs),
      token,
      String(this.caps.concurrency),
      String(this.caps.perSecond),
    );
    return Number(taken) === 1;
  }

  async release(webhookId: string, token: string): Promise<void> {
    await this.redis.zrem(this.keys(webhookId, Date.now())[0], token);
  }
}
