// An old import path, kept for modules outside lib/ingest that another change is moving (lib/accounts):
// exclusion matching lives in lib/ingest/accept/exclusions.ts. Remove once nothing imports this file.
export { isIpRule, MAX_IP_EXCLUSIONS, MAX_PATH_EXCLUSIONS, MAX_PATTERN_LENGTH, MAX_PATTERN_STARS } from './accept/exclusions';
