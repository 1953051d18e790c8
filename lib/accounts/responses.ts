// Response schemas of the dashboard APIs (auth, users, websites, goals, exclusions, members, teams, keys,
// invites). The view functions and routes that build these bodies are typed from them (z.infer or
// `satisfies`), and lib/openapi generates the document from them: the document cannot drift from the code.

import { websiteDetail, websiteSettings } from '../external/schemas';
import { PLAN_NAMES, ROLE_NAMES } from '../plans';
import { apiKeyActivitySchema } from '../stats/reads/apiKeyActivity';
import { z } from '../zod';
import { GOAL_KINDS } from './schemas';

const isoTime = z.string().datetime();
const count = z.number().int().min(0);
/** null = no limit on this plan. */
const limit = count.nullable();
const role = z.enum(ROLE_NAMES);

export const userView = z.object({
  id: z.string(),
  email: z.string(),
  full_name: z.string().nullable(),
  avatar_url: z.string().nullable(),
  default_team_id: z.string().nullable(),
  created_at: isoTime,
  updated_at: isoTime,
});

/** Login, registration and accepting an invite as a new user: the user, their default team and a JWT. */
export const signInView = z.object({
  user: userView,
  team: z.object({ id: z.string(), name: z.string(), plan: z.enum(PLAN_NAMES) }).optional(),
  token: z.string(),
});
/** Whether the first-run screen is due: an instance with no owner yet, and whether anyone may sign up. */
export const setupView = z.object({ owner_exists: z.boolean(), signup_open: z.boolean() });
export type SetupView = z.infer<typeof setupView>;
export const tokenView = z.object({ token: z.string(), expires_in: count });
export const passwordChangedView = tokenView.extend({ updated: z.literal(true) });
export const loggedOutView = z.object({ logged_out: z.literal(true) });
export const deletedView = z.object({ deleted: z.literal(true) });
export const revokedView = z.object({ revoked: z.literal(true) });

export const websiteView = z.object({ website: websiteDetail });
export const websiteListView = z.object({ websites: z.array(websiteDetail), total: count });
export const generalSettingsView = websiteDetail.pick({
  id: true,
  domain: true,
  name: true,
  timezone: true,
  primary_color: true,
  kpi_goal: true,
  public_dashboard: true,
  allowed_domains: true,
  updated_at: true,
});
export const trackingSettingsView = z.object({ id: z.string(), settings: websiteSettings, updated_at: isoTime });
export const trackingSnippetView = z.object({
  website_id: z.string(),
  tracking_code: z.string(),
  script: z.string(),
  src: z.string(),
  events_endpoint: z.string(),
  options: z.object({ persist: z.boolean(), allow_localhost: z.boolean() }),
});

export const goalView = z.object({
  id: z.string(),
  website_id: z.string(),
  name: z.string(),
  kind: z.enum(GOAL_KINDS),
  path: z.string().nullable(),
  is_active: z.boolean(),
  created_via: z.string(),
  created_at: isoTime,
  updated_at: isoTime,
});

const exclusion = z.object({
  id: z.string(),
  website_id: z.string(),
  description: z.string().nullable(),
  created_at: isoTime,
});
export const ipExclusionView = exclusion.extend({ ip_address: z.string() });
export const pathExclusionView = exclusion.extend({ path_pattern: z.string() });
export const exclusionsView = z.object({
  ip_exclusions: z.array(ipExclusionView),
  path_exclusions: z.array(pathExclusionView),
});

export const memberView = z.object({
  id: z.string(),
  user_id: z.string(),
  role,
  created_at: isoTime,
  deactivated_at: isoTime.nullable(),
  user: z.object({
    id: z.string(),
    email: z.string(),
    full_name: z.string().nullable(),
    avatar_url: z.string().nullable(),
    name: z
      .string()
      .optional()
      .openapi({ description: 'The team members list only: the full name, or the email when there is none.' }),
  }),
});

export const apiKeyView = z.object({
  id: z.string(),
  name: z.string(),
  permission: z.enum(['full_access', 'site_access']),
  website_id: z.string().nullable(),
  prefix: z.string(),
  created_at: isoTime,
  last_used_at: isoTime.nullable(),
  revoked_at: isoTime.nullable(),
});
export const createdApiKeyView = apiKeyView.extend({
  key: z.string().openapi({ description: 'The secret, shown this once.' }),
});
export const apiKeyActivityView = apiKeyActivitySchema.extend({ api_key: apiKeyView });

export const teamPermissionsView = z.object({
  team_id: z.string(),
  role,
  plan: z.string().openapi({ description: 'The plan, or its label when the operator set one.' }),
  plan_limits: z.object({ maxWebsites: limit, maxTeamMembers: limit, eventsPerMonth: limit, dataRetentionDays: count }),
  current_usage: z.object({ websites: count, team_members: count }),
  permissions: z.object({
    can_manage_billing: z.boolean(),
    can_manage_team: z.boolean(),
    can_edit_settings: z.boolean(),
    can_view: z.literal(true),
  }),
});
export const teamUsageView = z.object({
  team_id: z.string(),
  plan: z.string(),
  period: z.object({ start: isoTime, end: isoTime }),
  usage: z.object({
    events: count,
    events_limit: limit,
    websites: count,
    websites_limit: limit,
    team_members: count,
    team_members_limit: limit,
  }),
});

export const inviteView = z.object({
  id: z.string(),
  team: z.object({ id: z.string(), name: z.string() }),
  email: z.string(),
  role,
  created_at: isoTime,
  expires_at: isoTime,
  status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
});
export const createdInviteView = inviteView.extend({
  url: z.string().openapi({ description: 'The link to send; shown this once.' }),
  token: z.string(),
});
export const invitePreviewView = inviteView.extend({
  registered: z
    .boolean()
    .openapi({ description: 'Whether an account with the invited email exists (sign in) or not (register).' }),
});
const acceptedMembership = { team_id: z.string(), member: z.object({ id: z.string(), role }) };
export const inviteAcceptedView = z.object(acceptedMembership);
export const inviteRegisteredView = signInView.extend(acceptedMembership);

export type UserView = z.infer<typeof userView>;
export type SignInView = z.infer<typeof signInView>;
export type TokenView = z.infer<typeof tokenView>;
export type PasswordChangedView = z.infer<typeof passwordChangedView>;
export type LoggedOutView = z.infer<typeof loggedOutView>;
export type DeletedView = z.infer<typeof deletedView>;
export type RevokedView = z.infer<typeof revokedView>;
export type WebsiteListView = z.infer<typeof websiteListView>;
export type GeneralSettingsView = z.infer<typeof generalSettingsView>;
export type TrackingSettingsView = z.infer<typeof trackingSettingsView>;
export type TrackingSnippetView = z.infer<typeof trackingSnippetView>;
export type GoalView = z.infer<typeof goalView>;
export type IpExclusionView = z.infer<typeof ipExclusionView>;
export type PathExclusionView = z.infer<typeof pathExclusionView>;
export type ExclusionsView = z.infer<typeof exclusionsView>;
export type MemberView = z.infer<typeof memberView>;
export type ApiKeyView = z.infer<typeof apiKeyView>;
export type CreatedApiKeyView = z.infer<typeof createdApiKeyView>;
export type TeamPermissionsView = z.infer<typeof teamPermissionsView>;
export type TeamUsageView = z.infer<typeof teamUsageView>;
export type InviteView = z.infer<typeof inviteView>;
export type InvitePreviewView = z.infer<typeof invitePreviewView>;
export type CreatedInviteView = z.infer<typeof createdInviteView>;
export type InviteAcceptedView = z.infer<typeof inviteAcceptedView>;
export type ApiKeyActivityView = z.infer<typeof apiKeyActivityView>;
