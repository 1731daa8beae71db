import { type ParsedRoute, parseRoute, type RouteParser } from '../rules/route.js'
import { type CostTable, compileCosts } from './costs.js'
import { compilePattern, matchesAny, normalizePath, type PathPattern } from './path-pattern.js'
import type { RouteTarget } from './route-target.js'

/**
 * How rules with routes are matched: the routes compiled into patterns, costs by route, and the
 * request path normalised (percent-decoding, dot segments, trailing slashes) before it is
 * matched. Built into `createLimiter` and the default entries; the lean entries take it from
 * the app as `routes`, so that an app whose rules name no route bundles none of it.
 */
export type RouteMatching = {
  /** Reads a route while rules are validated. */
  readonly parseRoute: RouteParser
  /** The path a request is matched on. */
  readonly normalizePath: (target: string) => string
  readonly matchesAny: (patterns: readonly PathPattern[], path: string) => boolean
  /** A rule's targets for its `match.route` list, the route's own method winning. */
  readonly targets: (
    routes: readonly string[],
    methods: readonly (string | undefined)[],
  ) => RouteTarget[]
  readonly compileCosts: (costByRoute: Readonly<Record<string, number>>) => CostTable
}

/**
 * Rules matched by route (`match.route`, `costByRoute`).
 * @example
 * import { rateLimit, routeMatching, tokenBucket } from '@tollgate/hono/lean'
 * rateLimit(rules, { algorithms: { token_bucket: tokenBucket }, routes: routeMatching })
 */
export const routeMatching: RouteMatching = {
  parseRoute,
  normalizePath,
  matchesAny,
  targets: routeTargets,
  compileCosts,
}

function routeTargets(
  routes: readonly string[],
  methods: readonly (string | undefined)[],
): RouteTarget[] {
  const targets: RouteTarget[] = []
  for (const text of routes) {
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
