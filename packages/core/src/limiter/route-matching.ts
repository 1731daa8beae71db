import { type ParsedRoute, parseRoute } from '../rules/route.js'
import type { Rule } from '../rules/types.js'
import { checkRoute, type RouteReader, readCosts } from '../rules/validate-routes.js'
import type { CompiledRule } from './compile-rule.js'
import { type CostTable, compileCosts } from './costs.js'
import { routeIndex } from './path-index.js'
import { compilePattern } from './path-pattern.js'
import type { RouteTarget } from './route-target.js'
import type { RuleIndex } from './rule-index.js'

/**
 * How rules with routes are matched: routes read while rules are validated, compiled into
 * patterns and costs by route, and the request path normalised (percent-decoding, dot
 * segments, trailing slashes) before it is matched. A limiter whose rules name no route never
 * normalises a path (`RuleIndex.normalizePath`).
 */
export type RouteMatching = RouteReader & {
  /** The targets of a rule with `match.route`, each route's own method winning. */
  readonly targets: (rule: Rule) => RouteTarget[]
  /** The costs of a rule with `costByRoute`. */
  readonly compileCosts: (rule: Rule) => CostTable
  /**
   * How a request's rules are found: by method and path (`routeIndex`), or, without route
   * matching, by a scan of every rule (`ruleScan`).
   */
  readonly ruleIndex: (rules: readonly CompiledRule[]) => RuleIndex
}

/** Rules matched by route (`match.route`, `costByRoute`). */
export const routeMatching: RouteMatching = {
  parseRoute,
  checkRoute,
  readCosts,
  targets: routeTargets,
  compileCosts: (rule) => compileCosts(rule.costByRoute),
  ruleIndex: routeIndex,
}

function routeTargets(rule: Rule): RouteTarget[] {
  const methods: readonly (string | undefined)[] = rule.match.method ?? [undefined]
  const targets: RouteTarget[] = []
  for (const text of rule.match.route ?? []) {
    const route = parseRoute(text) as ParsedRoute
    const pattern = compilePattern(route)
    const everyPath = pattern.rest && pattern.segments.length === 0
    // A route's own method wins; validation has checked that it agrees with match.method.
    for (const method of route.method === undefined ? methods : [route.method]) {
      targets.push({ method, pattern: everyPath ? undefined : pattern })
    }
  }
  return targets
}
