import { RateLimitError } from '../errors.js'
import { RuleValidationError } from '../rules/issues.js'
import type { Rule } from '../rules/types.js'
import type { RouteMatching } from './route-matching.js'

// Apart from route-matching.ts and reached only by the lean limiter, so that neither the
// matching (in a lean bundle) nor these refusals (in a default one) are bundled where unused.

const PROBLEM =
  'needs route matching, which this limiter was not given: add routes: routeMatching (exported beside it) to the options'

function refuse(rule: Rule, field: string): never {
  throw new RuleValidationError([{ rule: rule.id, field, problem: PROBLEM }])
}

/**
 * A lean limiter's route matching when the app passes none: a route is refused while rules are
 * validated (reported as a bad route, naming the rule and the field), and a rule validated
 * elsewhere (`defineRules`) that names one is refused when compiled. No rule has a pattern, so
 * the path is never looked at.
 */
export const NO_ROUTES: RouteMatching = {
  parseRoute: () => PROBLEM,
  normalizePath: (target) => target,
  matchesAny: () => false,
  targets: (rule) => refuse(rule, 'match.route'),
  compileCosts: (rule) => refuse(rule, 'costByRoute'),
}

/** The `routes` option, refused at start-up unless it is `routeMatching` (or absent). */
export function checkRoutesOption(routes: RouteMatching | undefined): RouteMatching | undefined {
  if (routes === undefined || typeof routes?.targets === 'function') return routes
  throw new RateLimitError('ERR_RL_INVALID_RULE', 'routes: expected routeMatching', {
    field: 'routes',
  })
}
