// Request schemas of the account, website, key, goal and member endpoints. Unknown fields are stripped
// (zod's default for z.object), every string and array is capped (DESIGN §2 rule 2).

import { UUID } from '../checks';
import { isIpRule, MAX_PATTERN_LENGTH, MAX_PATTERN_STARS } from '../ingest/accept/exclusions';
import { ROLE_NAMES } from '../plans';
import { canonicalTimeZone } from '../stats/timeZones';
import { z } from '../zod';
import { text } from './storable';

export const email = text().trim().toLowerCase().max(254).email('must be an email address');
export const password = z.string().min(8, 'must be at least 8 characters').max(512);
const fullName = text().trim().min(1).max(200);
export const domainName = text()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)(localhost|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}|\d{1,3}(\.\d{1,3}){3})(:\d{1,5})?$/,
    'must be a domain name such as example.com',
  );
const websiteName = text().trim().min(1).max(200);
// Stored as ClickHouse spells it (`utc` → `UTC`); a zone the runtime or ClickHouse lacks would fail every read.
export const timezone = text()
  .max(64)
  .refine(
    (tz) => canonicalTimeZone(tz) !== undefined,
    'must be an IANA time zone such as Europe/Berlin, known to ClickHouse',
  )
  .transform((tz) => canonicalTimeZone(tz)!);
export const uuid = z.string().regex(UUID, 'must be a UUID');
export const role = z.enum(ROLE_NAMES);

export const registerBody = z.object({ email, password, full_name: fullName.optional() });
export const loginBody = z.object({ email, password: z.string().min(1).max(512) });
export const updateProfileBody = z.object({
  full_name: fullName.nullable().optional(),
  avatar_url: text()
    .max(2048)
    .regex(/^[hH][tT][tT][pP][sS]?:\/\/\S+$/, 'must be an http(s) URL') // no i flag: see UUID in lib/checks.ts
    .nullable()
    .optional(),
});
export const changePasswordBody = z.object({ current_password: z.string().min(1).max(512), new_password: password });
/** Deleting one's account asks for the password again: a token alone (a left-open tab) cannot delete it. */
export const deleteAccountBody = z.object({ password: z.string().min(1).max(512) });

export const createWebsiteBody = z.object({
  domain: domainName,
  name: websiteName,
  team_id: uuid.optional(),
  timezone: timezone.optional(),
});
export const externalCreateWebsiteBody = z.object({ domain: domainName, name: websiteName });

export const updateGeneralBody = z.object({
  domain: domainName.optional(),
  name: websiteName.optional(),
  timezone: timezone.optional(),
  primary_color: z
    .string()
    .regex(/^#[0-9a-fA-F]{3}([0-9a-fA-F]{3})?$/, 'must be a hex colour such as #1a2b3c')
    .nullable()
    .optional(),
  kpi_goal: z.number().finite().nonnegative().max(1e12).nullable().optional(),
  public_dashboard: z.boolean().optional(),
  allowed_domains: z.array(domainName).max(100).optional(),
});

export const createApiKeyBody = z
  .object({
    name: text().trim().min(1).max(100),
    permission: z.enum(['full_access', 'site_access']),
    website_id: uuid.optional(),
  })
  .refine((b) => (b.permission === 'site_access') === (b.website_id !== undefined), {
    message: 'website_id is required for site_access keys and not allowed for full_access keys',
    path: ['website_id'],
  });

export const goalName = text().trim().min(1).max(200);
/** A path pattern (path exclusions, page goals, funnel steps): `*` is any run of characters, the rest literal. */
export const pathPattern = text()
  .trim()
  .min(1)
  .max(MAX_PATTERN_LENGTH, `must be at most ${MAX_PATTERN_LENGTH} characters`)
  .regex(/^[/*]/, 'must start with / or *')
  .refine((v) => v.split('*').length - 1 <= MAX_PATTERN_STARS, `may hold at most ${MAX_PATTERN_STARS} * wildcards`);
export const GOAL_KINDS = ['event', 'page', 'purchase'] as const;
/**
 * A goal: a custom event by its name (kind event, the default), a pageview whose path matches `path` (kind
 * page; the name defaults to "Visit <path>"), or the website's succeeded purchases (kind purchase).
 */
export const createGoalBody = z
  .object({
    name: goalName.optional(),
    kind: z.enum(GOAL_KINDS).default('event'),
    path: pathPattern.optional(),
    is_active: z.boolean().optional(),
  })
  .refine((b) => (b.kind === 'page') === (b.path !== undefined), {
    message: 'path is required for page goals and not allowed for the other kinds',
    path: ['path'],
  })
  .refine((b) => b.kind === 'page' || b.name !== undefined, { message: 'name is required', path: ['name'] });
export const updateGoalBody = z.object({
  name: goalName.optional(),
  path: pathPattern.optional(),
  is_active: z.boolean().optional(),
});

export const addMemberBody = z.object({ email, role: role.optional() });
export const changeRoleBody = z.object({ role });
export const createInviteBody = z.object({ email, role: role.default('viewer') });
/** Accepting an invite: signed in, nothing; a new person, the password (and name) of the account to create. */
export const acceptInviteBody = z.object({ password: password.optional(), full_name: fullName.optional() });

export type RegisterBody = z.infer<typeof registerBody>;
export type CreateWebsiteBody = z.infer<typeof createWebsiteBody>;
export type UpdateGeneralBody = z.infer<typeof updateGeneralBody>;
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>;
export type CreateGoalBody = z.infer<typeof createGoalBody>;
export type UpdateGoalBody = z.infer<typeof updateGoalBody>;
export type GoalKind = (typeof GOAL_KINDS)[number];
export type UpdateProfileBody = z.infer<typeof updateProfileBody>;

export const ipExclusionBody = z.object({
  ip_address: text()
    .trim()
    .max(64)
    .refine((v) => isIpRule(v), 'must be an IPv4 or IPv6 address or CIDR range'),
  description: text().trim().max(500).optional(),
});
export const pathExclusionBody = z.object({
  path_pattern: pathPattern,
  description: text().trim().max(500).optional(),
});
export const trackingSettingsBody = z.object({
  track_outbound_links: z.boolean().optional(),
  track_downloads: z.boolean().optional(),
  session_replay: z.boolean().optional(),
  heatmaps: z.boolean().optional(),
  /** Record bot traffic (curl, headless browsers) marked `tm_debug=bot` instead of ignoring it: for testing. */
  debug: z.boolean().optional(),
});
