// Websites' part of the OpenAPI document (Bearer JWT): websites and their settings and snippet, goals,
// exclusions, the team members seen from a website, and error triage.
import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import {
  deletedView,
  exclusionsView,
  generalSettingsView,
  goalView,
  ipExclusionView,
  memberView,
  pathExclusionView,
  trackingSettingsView,
  trackingSnippetView,
  websiteListView,
  websiteView,
} from '../accounts/responses';
import {
  addMemberBody,
  changeRoleBody,
  createGoalBody,
  createWebsiteBody,
  ipExclusionBody,
  pathExclusionBody,
  trackingSettingsBody,
  updateGeneralBody,
  updateGoalBody,
} from '../accounts/schemas';
import { snippetQuery } from '../accounts/snippet';
import { errorGroup, errorGroupStatusBody, errorGroupsData, errorGroupsQuery } from '../external/schemas';
import { z } from '../zod';
import { dashboardErrors as errors, jwtOperations } from './common';

export function registerWebsites(r: OpenAPIRegistry): void {
  const op = jwtOperations(r);
  const W = '/api/websites/{websiteId}';

  const websites = op('Websites');
  websites({
    method: 'post',
    path: '/api/websites',
    summary: 'Create a website in a team the caller administers (default: their default team)',
    body: createWebsiteBody,
    data: websiteView,
    status: 201,
    errors: errors([401, 403, 404], true),
  });
  websites({
    method: 'get',
    path: '/api/websites',
    summary: 'Websites of every team the caller belongs to, newest first',
    data: websiteListView,
    errors: errors([401]),
  });
  websites({
    method: 'get',
    path: W,
    summary: 'One website (viewer)',
    data: websiteView,
    errors: errors([401, 403, 404]),
  });
  websites({
    method: 'delete',
    path: W,
    summary: 'Delete a website and its analytics (admin)',
    data: deletedView,
    errors: errors([401, 403, 404]),
  });
  websites({
    method: 'get',
    path: `${W}/snippet`,
    summary: 'The tracking snippet to paste into pages (viewer)',
    query: snippetQuery,
    data: trackingSnippetView,
    errors: errors([401, 403, 404]),
  });
  websites({
    method: 'put',
    path: `${W}/general`,
    summary: 'General settings: domain, name, time zone, colour, KPI goal, public dashboard, allowed domains (editor)',
    body: updateGeneralBody,
    data: generalSettingsView,
    errors: errors([401, 403, 404], true),
  });
  websites({
    method: 'put',
    path: `${W}/tracking`,
    summary: 'Tracking settings: outbound links, downloads, session replay, heatmaps, debug (editor)',
    body: trackingSettingsBody,
    data: trackingSettingsView,
    errors: errors([401, 403, 404], true),
  });

  const goals = op('Goals');
  const goal = goalView.openapi('Goal');
  goals({
    method: 'get',
    path: `${W}/goals`,
    summary: 'The website’s goals (viewer)',
    data: z.object({ goals: z.array(goal) }),
    errors: errors([401, 403, 404]),
  });
  goals({
    method: 'post',
    path: `${W}/goals`,
    summary: 'Create a goal (editor); goal events are accepted for active goals only',
    body: createGoalBody,
    data: z.object({ goal }),
    status: 201,
    errors: errors([401, 403, 404, 409], true),
  });
  goals({
    method: 'put',
    path: `${W}/goals/{goalId}`,
    summary: 'Rename or (de)activate a goal (editor)',
    body: updateGoalBody,
    data: z.object({ goal }),
    errors: errors([401, 403, 404, 409], true),
  });
  goals({
    method: 'delete',
    path: `${W}/goals/{goalId}`,
    summary: 'Delete a goal (editor)',
    data: deletedView,
    errors: errors([401, 403, 404]),
  });

  const exclusions = op('Exclusions');
  exclusions({
    method: 'get',
    path: `${W}/exclusions`,
    summary: 'IP and path exclusions (viewer)',
    data: exclusionsView,
    errors: errors([401, 403, 404]),
  });
  const kinds = [
    ['ip', ipExclusionBody, ipExclusionView, 'an IPv4/IPv6 address or CIDR range'],
    ['path', pathExclusionBody, pathExclusionView, 'a path pattern (* wildcards)'],
  ] as const;
  for (const [kind, body, view, what] of kinds) {
    exclusions({
      method: 'post',
      path: `${W}/exclusions/${kind}`,
      summary: `Exclude ${what} from tracking (editor); 409 when already excluded or at the website’s cap`,
      body,
      data: view,
      status: 201,
      errors: errors([401, 403, 404, 409], true),
    });
    exclusions({
      method: 'delete',
      path: `${W}/exclusions/${kind}/{exclusionId}`,
      summary: `Delete a ${kind} exclusion (editor)`,
      data: deletedView,
      errors: errors([401, 403, 404]),
    });
  }

  const members = op('Team members');
  const member = memberView.openapi('TeamMember');
  members({
    method: 'get',
    path: `${W}/team-members`,
    summary: 'Members of the website’s team (viewer)',
    data: z.array(member),
    errors: errors([401, 403, 404]),
  });
  members({
    method: 'post',
    path: `${W}/team-members`,
    summary: 'Add a registered user to the website’s team by email (admin; only an owner grants owner)',
    body: addMemberBody,
    data: member,
    status: 201,
    errors: errors([401, 403, 404, 409, 429], true),
  });
  members({
    method: 'put',
    path: `${W}/team-members/{memberId}`,
    summary: 'Change a member’s role (admin; a team keeps at least one owner)',
    body: changeRoleBody,
    data: member,
    errors: errors([401, 403, 404, 409], true),
  });
  members({
    method: 'delete',
    path: `${W}/team-members/{memberId}`,
    summary: 'Deactivate a member (admin; a team keeps at least one owner)',
    data: deletedView,
    errors: errors([401, 403, 404, 409]),
  });

  const triage = op('Error triage');
  triage({
    method: 'get',
    path: `${W}/errors`,
    summary: 'The website’s JavaScript error groups by last occurrence (viewer)',
    query: errorGroupsQuery,
    data: errorGroupsData,
    errors: errors([401, 403, 404]),
  });
  triage({
    method: 'put',
    path: `${W}/errors/{groupId}`,
    summary: 'Move an error group to unresolved, resolved or ignored (editor)',
    body: errorGroupStatusBody,
    data: z.object({ error_group: errorGroup }),
    errors: errors([401, 403, 404], true),
  });
}
