// Plans and their limits (DESIGN §3 "Plans"). Billing is out of scope: operators set plans with the CLI.
import { z } from './zod';

// The spec's four plans, and `unlimited`: the instance owner's team on a self-hosted server (DESIGN §5).
export const PLAN_NAMES = ['free', 'pro', 'scale', 'enterprise', 'unlimited'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export const ROLE_NAMES = ['viewer', 'editor', 'admin', 'owner'] as const;
export type Role = (typeof ROLE_NAMES)[number];
export const ROLE_RANK: Record<Role, number> = { viewer: 1, editor: 2, admin: 3, owner: 4 };

/** Legacy names are accepted and reported back (spec "Limits": Starter counts as Pro, Professional as Scale). */
export const LEGACY_PLANS: Record<string, PlanName> = { starter: 'pro', professional: 'scale' };

/** null = unlimited. */
export interface PlanLimits {
  requestsPerMinute: number | null;
  requestsPerMonth: number | null;
  maxWebsites: number | null;
  maxTeamMembers: number | null;
  eventsPerMonth: number | null;
  dataRetentionDays: number;
  /** Chart annotations a team may create per calendar month (UTC). */
  annotationsPerMonth: number | null;
}

// Rows carry an expiry (DateTime, which ends in 2106): "kept for good" is the longest span that fits.
const KEPT_FOR_GOOD_DAYS = 25_000;

export const PLANS: Record<PlanName, PlanLimits> = {
  free: {
    requestsPerMinute: 10,
    requestsPerMonth: 1_000,
    maxWebsites: 1,
    maxTeamMembers: 1,
    eventsPerMonth: 10_000,
    dataRetentionDays: 30,
    annotationsPerMonth: 10,
  },
  pro: {
    requestsPerMinute: 30,
    requestsPerMonth: 10_000,
    maxWebsites: 10,
    maxTeamMembers: 5,
    eventsPerMonth: 1_000_000,
    dataRetentionDays: 365,
    annotationsPerMonth: null,
  },
  scale: {
    requestsPerMinute: 60,
    requestsPerMonth: 100_000,
    maxWebsites: 50,
    maxTeamMembers: 20,
    eventsPerMonth: 10_000_000,
    dataRetentionDays: 730,
    annotationsPerMonth: null,
  },
  enterprise: {
    requestsPerMinute: 120,
    requestsPerMonth: 1_000_000,
    maxWebsites: null,
    maxTeamMembers: null,
    eventsPerMonth: 100_000_000,
    dataRetentionDays: 1825,
    annotationsPerMonth: null,
  },
  unlimited: {
    requestsPerMinute: null,
    requestsPerMonth: null,
    maxWebsites: null,
    maxTeamMembers: null,
    eventsPerMonth: null,
    dataRetentionDays: KEPT_FOR_GOOD_DAYS,
    annotationsPerMonth: null,
  },
};

/** Parses an operator-given plan name, legacy names included. */
export function parsePlanName(input: string): { plan: PlanName; label: string } | undefined {
  const name = input.trim().toLowerCase();
  if ((PLAN_NAMES as readonly string[]).includes(name)) return { plan: name as PlanName, label: name };
  const mapped = LEGACY_PLANS[name];
  return mapped ? { plan: mapped, label: name } : undefined;
}

/** Operator overrides: key absent = the plan's value; null = unlimited. */
export const limitOverridesSchema = z
  .object({
    rpm: z.number().int().positive().nullable(),
    monthly: z.number().int().positive().nullable(),
    events: z.number().int().positive().nullable(),
  })
  .partial();
export type LimitOverrides = z.infer<typeof limitOverridesSchema>;

export interface EffectiveLimits {
  /** null = unlimited */
  requestsPerMinute: number | null;
  requestsPerMonth: number | null;
  eventsPerMonth: number | null;
}

export function effectiveLimits(plan: PlanName, overrides: LimitOverrides): EffectiveLimits {
  const base = PLANS[plan];
  const pick = (key: keyof LimitOverrides, fallback: number | null) =>
    key in overrides ? (overrides[key] ?? null) : fallback;
  return {
    requestsPerMinute: pick('rpm', base.requestsPerMinute),
    requestsPerMonth: pick('monthly', base.requestsPerMonth),
    eventsPerMonth: pick('events', base.eventsPerMonth),
  };
}

/** Plans in the order they include each other's features ("Scale or higher"). */
const PLAN_ORDER: readonly PlanName[] = ['free', 'pro', 'scale', 'enterprise', 'unlimited'];
export const planAtLeast = (plan: PlanName, minimum: PlanName) =>
  PLAN_ORDER.indexOf(plan) >= PLAN_ORDER.indexOf(minimum);
