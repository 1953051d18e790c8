// Response types of the goals, funnels, team and API-key endpoints, inferred from the server's zod schemas.
import type { FunnelView } from '../../../../lib/accounts/funnelSchemas';
import type {
  ApiKeyView,
  CreatedApiKeyView,
  CreatedInviteView,
  GoalView,
  InviteView,
  MemberView,
  TeamPermissionsView,
} from '../../../../lib/accounts/responses';
import type { Role } from '../../../../lib/plans';

export type { ApiKeyView, CreatedApiKeyView, CreatedInviteView, FunnelView, GoalView, InviteView, MemberView, Role };
export type TeamPermissions = TeamPermissionsView;
