// Goals and purchases as conditions on `events` rows (issue 22): which rows complete a goal, and what a
// purchase adds to revenue. Names and patterns are always bound.
import type { GoalDefinition } from '../model';
import { isPlainPath, pathPatternLike } from '../patterns';

/** Purchases that count: status succeeded adds the amount; status refunded subtracts it. */
export const SUCCEEDED = "JSONExtractString(props, 'status') = 'succeeded'";
export const REFUNDED = "JSONExtractString(props, 'status') = 'refunded'";

/** The net revenue of purchase rows (succeeded minus refunded), as Decimal. */
export const NET_REVENUE = `sumIf(if(${REFUNDED}, -abs(revenue), revenue), type = 'purchase' AND (${SUCCEEDED} OR ${REFUNDED}))`;

/** `column` (a path) matching a path pattern, bound as `param`: equality for a plain path, else LIKE. */
export function pathMatches(pattern: string, column: string, param: string, params: Record<string, unknown>): string {
  params[param] = isPlainPath(pattern) ? pattern : pathPatternLike(pattern);
  return `${column} ${isPlainPath(pattern) ? '=' : 'LIKE'} {${param}:String}`;
}

/**
 * The condition on an `events` row completing the goal, binding its name or pattern as `param`. With
 * `refunds`, a purchase goal also takes its refunds (rows that subtract revenue and complete nothing).
 */
export function goalCondition(
  goal: GoalDefinition,
  param: string,
  params: Record<string, unknown>,
  refunds = false,
): string {
  switch (goal.kind) {
    case 'event':
      params[param] = goal.name;
      return `(type IN ('event', 'goal') AND name = {${param}:String})`;
    case 'page':
      return `(type = 'pageview' AND ${pathMatches(goal.path ?? '', 'pathname', param, params)})`;
    case 'purchase':
      return `(type = 'purchase' AND (${SUCCEEDED}${refunds ? ` OR ${REFUNDED}` : ''}))`;
  }
}
