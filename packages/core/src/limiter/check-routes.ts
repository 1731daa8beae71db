import { RateLimitError } from '../errors.js'
import { type RuleIssue, RuleValidationError } from '../rules/issues.js'
import type { Rule } from '../rules/types.js'
import type { RouteMatching } from './route-matching.js'

/**
 * The route matching a limiter uses, checked at start-up: `routes` must look like
 * `routeMatching`, and without one no rule may name a route (`match.route`, `costByRoute`):
 * each such rule is refused, naming the field. Apart from route-matching.ts, so that a lean
 * bundle whose rules name no route holds none of the matching.
 */
export function checkRoutes(
  rules: readonly Rule[],
  routes: RouteMatching | undefined,
): RouteMatching | undefined {
  if (routes !== undefined) {
    if (typeof routes?.normalizePath !== 'function' || typeof routes.targets !== 'function') {
      throw new RateLimitError('ERR_RL_INVALID_RULE', 'routes: expected routeMatching', {
        field: 'routes',
      })
    }
    return routes
  }
  const issues: RuleIssue[] = []
  const problem =
    'this limiter matches routes with the matcher the app passes: add routes: routeMatching (exported beside it) to the options'
  for (const rule of rules) {
    if (rule.match.route !== undefined)
      issues.push({ rule: rule.id, field: 'match.route', problem })
    if (Object.keys(rule.costByRoute).length > 0) {
      issues.push({ rule: rule.id, field: 'costByRoute', problem })
    }
  }
  if (issues.length > 0) throw new RuleValidationError(issues)
  return undefined
}
