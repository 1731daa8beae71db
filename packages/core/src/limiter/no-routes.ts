import { composedWithout, RuleValidationError } from '../rules/issues.js'
import type { Rule } from '../rules/types.js'
import type { RouteMatching } from './route-matching.js'
import { ruleScan } from './rule-index.js'

// Apart from route-matching.ts, and reached only by a limiter composed without route matching:
// its bundle holds none of the matching, and a default one none of these refusals.

const PROBLEM = /* @__PURE__ */ composedWithout('routes: routeMatching')

function refuse(rule: Rule, field: string): never {
  throw new RuleValidationError([{ rule: rule.id, field, problem: PROBLEM }])
}

/**
 * Route matching for a limiter composed without it: a route (in `match.route` or
 * `costByRoute`) is refused while rules are validated, naming the rule and the field, and a rule validated
 * elsewhere (`defineRules`) that names one is refused when compiled. No rule has a route, so
 * the rules are scanned by method and plan, and the path is never looked at.
 */
export const NO_ROUTES: RouteMatching = {
  parseRoute: () => PROBLEM,
  checkRoute: () => PROBLEM,
  readCosts: (byRoute, fieldOf, _check, issue) => {
    for (const route of Object.keys(byRoute)) issue(fieldOf(route), PROBLEM)
    return {}
  },
  targets: (rule) => refuse(rule, 'match.route'),
  compileCosts: (rule) => refuse(rule, 'costByRoute'),
  ruleIndex: ruleScan,
}
