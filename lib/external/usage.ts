// GET /usage (spec "External API"): the calling key, the team's month so far, the key's all-time total, the
// per-minute limit and the plan's tier name (legacy names reported as the operator set them).
import type { ApiKeyPrincipal } from '../accounts/apiKeys';
import { MonthlyUsage, nextMonthStart } from '../limits/usage';
import { effectiveLimits } from '../plans';
import type { Redis } from '../redis';
import type { UsageData } from './schemas';

export async function usageReport(
  redis: Redis,
  prefix: string,
  key: ApiKeyPrincipal,
  now = Date.now(),
): Promise<UsageData> {
  const usage = new MonthlyUsage(redis, prefix);
  const limits = effectiveLimits(key.plan, key.limitOverrides);
  const [used, total] = await Promise.all([usage.used(key.teamId, now), usage.keyTotalRequests(key.keyId)]);
  return {
    api_key: { id: key.keyId, name: key.keyName, permission: key.permission, website_id: key.websiteId },
    usage: {
      monthly_requests: used,
      monthly_limit: limits.requestsPerMonth,
      monthly_remaining: limits.requestsPerMonth === null ? null : Math.max(0, limits.requestsPerMonth - used),
      monthly_reset_at: new Date(nextMonthStart(now)).toISOString(),
      total_requests: total,
    },
    rate_limits: { requests_per_minute: limits.requestsPerMinute },
    subscription: { tier: key.planLabel },
  };
}
