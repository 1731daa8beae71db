import { RateLimitError } from '../errors.js'
import { type RuleIssue, RuleValidationError } from '../rules/issues.js'
import type { Rule } from '../rules/types.js'
import { NO_ROUTE_MATCHING } from '../rules/validate-match.js'
import type { RouteMatching } from './route-matching.js'

// Apart from route-matching.ts, so that a lean bundle whose rules name no route holds none of
// the matching.

/** The `routes` option, refused at start-up unless it is `routeMatching` (or absent). */
export function checkRoutesOption(routes: RouteMatching | undefined): RouteMatching | undefined {
  if (routes === undefined) return undefined
  const valid =
    typeof routes?.parseRoute === 'function' &&
    typeof routes.normalizePath === 'function' &&
    typeof routes.targets === 'function'
  if (valid) return routes
  throw new RateLimitError('ERR_RL_INVALID_RULE', 'routes: expected routeMatching', {
    field: 'routes',
  })
}

/**
 * For a limiter without route matching: refuses each rule naming a route (`match.route`,
 * `costByRoute`), naming the field. Rules in code are refused so while validated; this catches
 * the rules validated elsewhere (`defineRules`, a rules file).
 */
export function refuseRoutes(rules: readonly Rule[]): void {
  const issues: RuleIssue[] = []
  for (const rule of rules) {
    if (rule.match.route !== undefined) {
      issues.push({ rule: rule.id, field: 'match.route', problem: NO_ROUTE_MATCHING })
    }
    if (Object.keys(rule.costByRoute).length > 0) {
      issues.push({ rule: rule.id, field: 'costByRoute', problem: NO_ROUTE_MATCHING })
    }
  }
  if (issues.length > 0) throw new RuleValidationError(issues)
}
